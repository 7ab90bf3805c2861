import Configuration

@testable import GeoAttrDaemonConfig

/// docs/configuration.md and man/geoattrd.yaml.5, rendered from the key table (name, type,
/// default, flag, environment variable, reload or restart) and the descriptions the shipped
/// config/geoattrd.yaml gives each key in its comments.
struct ConfigurationReference {
    /// What the shipped file says of one key: the comment above it, and the value it shows.
    struct Sample {
        var description: String
        var value: String
    }

    var keys: [ConfigurationKey]
    var samples: [String: Sample]
    /// The shipped file's opening comment (precedence, errors, reload).
    var preamble: [String]
    var version: String

    init(keys: [ConfigurationKey], sampleFile: String, version: String) {
        self.keys = keys
        self.version = version
        (samples, preamble) = Self.parse(sampleFile)
    }

    // MARK: The shipped file's comments

    /// Reads the comment block above each key (a key without one shares the previous key's),
    /// including keys shown commented out (`# decimals: 2`, a commented `# static:` section,
    /// whose block describes each of its keys).
    static func parse(_ text: String) -> ([String: Sample], [String]) {
        var samples: [String: Sample] = [:]
        var preamble: [String] = []
        var pending: [String] = []
        var section = ""
        var sectionDescription = ""
        var commentedSection = false
        var previous = ""
        var seenSetting = false
        func add(_ key: String, _ value: String, commented: Bool) {
            var description = pending.joined(separator: " ")
            if description.isEmpty { description = commented && commentedSection ? sectionDescription : previous }
            samples[section + "." + key] = Sample(description: description, value: value)
            previous = description
            pending = []
        }
        for raw in text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            let trimmed = raw.trimmingSpaces()
            if trimmed.isEmpty {
                // The opening comment, without its title line.
                if !seenSetting && preamble.isEmpty {
                    preamble = pending.firstIndex(of: "").map { Array(pending[($0 + 1)...]) } ?? pending
                }
                pending = []
                continue
            }
            if trimmed.hasPrefix("#") {
                var content = String(trimmed.dropFirst())
                if content.hasPrefix(" ") { content.removeFirst() }
                let indented = raw.hasPrefix(" ")
                if !indented, let name = Self.sectionName(content) {
                    section = name
                    sectionDescription = pending.joined(separator: " ")
                    commentedSection = true
                    pending = []
                } else if let (name, value) = Self.setting(content.trimmingSpaces()),
                    indented || (commentedSection && content.hasPrefix(" ")), !value.isEmpty, !value.contains(" ")
                {
                    add(name, value, commented: true)
                } else {
                    pending.append(content.trimmingSpaces())
                }
                continue
            }
            seenSetting = true
            if !raw.hasPrefix(" "), let name = Self.sectionName(trimmed) {
                section = name
                commentedSection = false
                pending = []
            } else if let (name, value) = Self.setting(trimmed) {
                add(name, value, commented: false)
            }
        }
        return (samples, preamble)
    }

    private static func sectionName(_ line: String) -> String? {
        guard line.hasSuffix(":"), line.dropLast().allSatisfy({ $0.isLetter || $0 == "_" }), line.count > 1 else { return nil }
        return String(line.dropLast())
    }

    private static func setting(_ line: String) -> (String, String)? {
        guard let colon = line.firstIndex(of: ":") else { return nil }
        let name = line[..<colon]
        guard !name.isEmpty, name.allSatisfy({ $0.isLowercase || $0 == "_" }) else { return nil }
        return (String(name), String(line[line.index(after: colon)...]).trimmingSpaces())
    }

    // MARK: Rendering

    func description(of key: ConfigurationKey) -> String {
        var text = samples[key.name]?.description ?? ""
        // The flag has a column of its own.
        if let flag = key.flag { text = text.replacing(" Flag: --\(flag).", with: "") }
        return text
    }

    /// The value the example shows: the file's own "For example:", else the value it shows.
    func example(of key: ConfigurationKey) -> String {
        let described = samples[key.name]?.description ?? ""
        if let range = described.firstRange(of: "For example: ") {
            let rest = described[range.upperBound...]
            if rest.hasPrefix("[") { return String(rest.prefix { $0 != "]" }) + "]" }
        }
        let value = samples[key.name]?.value ?? ""
        return value.isEmpty || value == "\"\"" ? Self.placeholder(key) : value
    }

    private static func placeholder(_ key: ConfigurationKey) -> String {
        switch key.name {
        case "index.path": "/usr/share/geoattrd/europe.gidx"
        case "outputs.env_file": "/run/geoattrd/geo.env"
        case "outputs.prometheus_file": "/run/geoattrd/textfile/geoattrd.prom"
        case "api.metrics_socket": "/run/geoattrd/metrics.sock"
        case "outputs.group": "telemetry"
        default: "\"\""
        }
    }

    static func typeName(_ type: ConfigType) -> String {
        switch type {
        case .bool: "boolean"
        case .int: "integer"
        case .double: "number"
        case .string: "string"
        case .stringArray: "list of strings"
        default: type.rawValue
        }
    }

    static func applied(_ key: ConfigurationKey) -> String {
        key.applied == .reload ? "reload" : "restart"
    }

    static func defaultText(_ key: ConfigurationKey) -> String {
        key.defaultValue.isEmpty ? "none" : key.defaultValue
    }

    var sections: [(String, [ConfigurationKey])] {
        var result: [(String, [ConfigurationKey])] = []
        for key in keys {
            let section = key.components[0]
            if result.last?.0 == section { result[result.count - 1].1.append(key) } else { result.append((section, [key])) }
        }
        return result
    }

    static let regenerate = "GEOATTR_WRITE_DOCS=1 swift test --filter ConfigurationReferenceTests"

    func markdown() -> String {
        var out: [String] = []
        out.append("# Configuration")
        out.append("")
        out.append("<!-- Generated from the key table (Sources/GeoAttrDaemonConfig/ConfigurationKey.swift) and the")
        out.append("     comments of config/geoattrd.yaml; do not edit. Regenerate: \(Self.regenerate) -->")
        out.append("")
        out.append("geoattrd reads `/etc/geoattrd/geoattrd.yaml` (or `--config FILE`). Every key is optional.")
        out.append("`geoattrd --config FILE --check-config` validates a file and prints the effective settings.")
        out.append("")
        out.append(contentsOf: preamble.map { $0.isEmpty ? "" : $0 }.joinedParagraph())
        out.append("")
        out.append("\"reload\": `systemctl reload geoattrd` (SIGHUP) applies a change to the running daemon;")
        out.append("\"restart\": the daemon logs that the change waits for the next start.")
        out.append("")
        out.append("| key | type | default | flag | environment variable | applied at |")
        out.append("|---|---|---|---|---|---|")
        for key in keys {
            out.append("| [`\(key.name)`](#\(key.name.replacing(".", with: ""))) | \(Self.typeName(key.type)) | \(Self.markdownCode(Self.defaultText(key))) | \(key.flag.map { "`--\($0)`" } ?? "") | `\(key.environmentVariable)` | \(Self.applied(key)) |")
        }
        for (section, sectionKeys) in sections {
            out.append("")
            out.append("## \(section)")
            for key in sectionKeys {
                out.append("")
                out.append("### \(key.name)")
                out.append("")
                out.append(description(of: key))
                out.append("")
                out.append("- type: \(Self.typeName(key.type)); default: \(Self.markdownCode(Self.defaultText(key)))")
                out.append("- flag: \(key.flag.map { "`--\($0)`" } ?? "none"); environment: `\(key.environmentVariable)`")
                out.append("- applied at: \(Self.applied(key))")
                out.append("")
                out.append("```yaml")
                out.append("\(section):")
                out.append("  \(key.components.dropFirst().joined(separator: ".")): \(example(of: key))")
                out.append("```")
            }
        }
        return out.joined(separator: "\n") + "\n"
    }

    private static func markdownCode(_ text: String) -> String {
        text == "none" ? "none" : "`\(text)`"
    }

    func roff() -> String {
        var out: [String] = []
        out.append(".\\\" Generated from the key table (Sources/GeoAttrDaemonConfig/ConfigurationKey.swift) and the")
        out.append(".\\\" comments of config/geoattrd.yaml; do not edit. Regenerate: \(Self.regenerate)")
        out.append(".TH GEOATTRD.YAML 5 \"\" \"geoattrd \(version)\" \"File Formats\"")
        out.append(".nh")
        out.append(".SH NAME")
        out.append("geoattrd.yaml \\- geoattrd configuration file")
        out.append(".SH SYNOPSIS")
        out.append(".I /etc/geoattrd/geoattrd.yaml")
        out.append(".SH DESCRIPTION")
        out.append("A YAML mapping of sections to keys; every key is optional.")
        out.append(".B geoattrd \\-\\-config")
        out.append(".I FILE")
        out.append(".B \\-\\-check\\-config")
        out.append("validates a file and prints the effective settings.")
        out.append(".PP")
        out.append(Self.roffText(preamble.joined(separator: " ")))
        out.append(".PP")
        out.append("Each key below gives its type, its default, its flag and environment variable, and whether")
        out.append(".B systemctl reload geoattrd")
        out.append("(SIGHUP) applies it or it waits for the next start.")
        out.append(".SH KEYS")
        for (section, sectionKeys) in sections {
            out.append(".SS \(section)")
            for key in sectionKeys {
                out.append(".TP")
                out.append(".B \(key.name)")
                out.append(Self.roffText(description(of: key)))
                out.append(".br")
                var facts = "Type: \(Self.typeName(key.type)). Default: \(Self.defaultText(key))."
                if let flag = key.flag { facts += " Flag: --\(flag)." }
                facts += " Environment: \(key.environmentVariable). Applied at: \(Self.applied(key))."
                out.append(Self.roffText(facts))
                out.append(".br")
                out.append("Example: \\fB\(Self.roffText(key.components.dropFirst().joined(separator: "."))): \(Self.roffText(example(of: key)))\\fR (under \\fB\(section):\\fR)")
            }
        }
        out.append(".SH FILES")
        out.append(".TP")
        out.append(".I /etc/geoattrd/geoattrd.yaml")
        out.append("The configuration the shipped unit passes to geoattrd (a package conffile).")
        out.append(".SH SEE ALSO")
        out.append(".BR geoattrd (8),")
        out.append(".BR geoattrctl (1)")
        return out.joined(separator: "\n") + "\n"
    }

    /// Text for a roff line: backslashes escaped, no line starting with a control character.
    static func roffText(_ text: String) -> String {
        var escaped = text.replacing("\\", with: "\\e")
        escaped = escaped.replacing("--", with: "\\-\\-")
        if escaped.hasPrefix(".") || escaped.hasPrefix("'") { escaped = "\\&" + escaped }
        return escaped
    }
}

extension [String] {
    /// Comment lines as one paragraph.
    fileprivate func joinedParagraph() -> [String] {
        [filter { !$0.isEmpty }.joined(separator: " ")]
    }
}

extension String {
    func trimmingSpaces() -> String {
        var slice = Substring(self)
        while slice.first == " " { slice.removeFirst() }
        while slice.last == " " { slice.removeLast() }
        return String(slice)
    }
}
