import Foundation
import GeoAttrModel
import Testing
import TestSupport

/// man/geoattrd.8 and man/geoattrctl.1 are rendered from the binaries' own ArgumentParser
/// definitions (`--experimental-dump-help`, the model its help and completions come from): these
/// tests render them from the binaries the test command built and fail when the committed pages
/// differ. GEOATTR_WRITE_DOCS=1 writes them instead.
@Suite("the manual pages are the binaries' definitions")
struct ManualPageTests {
    static let regenerate = "GEOATTR_WRITE_DOCS=1 swift test --filter ManualPageTests"

    @Test("the committed page is what the binary's definition renders", arguments: ["geoattrd", "geoattrctl"])
    func generated(binary: String) async throws {
        let result = try await CommandResult.run(BuiltProducts.path(of: binary), ["--experimental-dump-help"])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let tool = try JSONDecoder().decode(ToolInfo.self, from: Data(result.stdout.utf8))
        let page = ManualPage.page(for: binary)
        let rendered = ManualPage(command: tool.command, section: page.section, extra: page.extra).render()
        try GeneratedFile.compare(rendered, withFile: RepositoryRoot.file("man/\(binary).\(page.section)"), regenerate: Self.regenerate)
    }
}

/// The part of ArgumentParser's `--experimental-dump-help` document a page shows.
struct ToolInfo: Decodable {
    var command: Command

    struct Command: Decodable {
        var commandName: String
        var abstract: String?
        var discussion: String?
        var shouldDisplay: Bool?
        var superCommands: [String]?
        var arguments: [Argument]?
        var subcommands: [Command]?
    }

    struct Argument: Decodable {
        struct Name: Decodable {
            var kind: String
            var name: String
        }

        var kind: String
        var names: [Name]?
        var valueName: String?
        var abstract: String?
        var discussion: String?
        var defaultValue: String?
        var allValues: [String]?
        var isOptional: Bool
        var isRepeating: Bool
        var shouldDisplay: Bool
    }
}

/// A page in the man(7) macros: name, synopsis, description, options, and each subcommand with
/// its own synopsis and options; the sections a binary's definition cannot hold come from `extra`.
struct ManualPage {
    var command: ToolInfo.Command
    var section: Int
    var extra: [(title: String, body: [String])]

    static func page(for binary: String) -> (section: Int, extra: [(title: String, body: [String])]) {
        let seeAlso = (title: "SEE ALSO", body: [".BR geoattrd (8),", ".BR geoattrctl (1),", ".BR geoattrd.yaml (5),", ".BR gpsd (8),", ".BR systemd.socket (5)"])
        switch binary {
        case "geoattrd":
            return (8, [
                (title: "FILES", body: [
                    ".TP", ".I /etc/geoattrd/geoattrd.yaml", "The configuration (geoattrd.yaml(5)).",
                    ".TP", ".I /run/geoattrd/geoattrd.sock", "The API socket (socket.path), group geoattr, mode 0660.",
                    ".TP", ".I /run/geoattrd/state", "The foreground/background state file (state.file), written by group geoattr\\-state.",
                    ".TP", ".I /run/geoattrd/metrics.sock",
                    "GET /metrics alone, for scrapers (geoattrd\\-metrics.socket, relayed to 127.0.0.1:2948 by geoattrd\\-metrics\\-proxy.socket; api.metrics_socket), mode 0666.",
                    ".TP", ".I /run/geoattrd/textfile",
                    "For outputs.prometheus_file: written by geoattrd, read by group geoattr\\-metrics (node_exporter's user).",
                    ".TP", ".I /var/lib/geoattrd/cache.json", "The last good result, served at once after a restart (state.dir).",
                    ".TP", ".I /usr/share/geoattrd/world.gidx", "The offline geocoder's world index (index.path), from the geoattrd\\-geodata package.",
                ]),
                seeAlso,
            ])
        default:
            return (1, [
                (title: "ENVIRONMENT", body: [
                    ".TP", ".B GEOATTRD_INDEX", "The index file lookup and index info read when no \\-\\-index is given.",
                    ".TP", ".B GEOATTRD_SOCKET", "The daemon's socket when no \\-\\-socket is given.",
                ]),
                seeAlso,
            ])
        }
    }

    func render() -> String {
        let name = command.commandName
        var out = [
            ".\\\" Generated from \(name) --experimental-dump-help (its ArgumentParser definitions); do not edit.",
            ".\\\" Regenerate: \(ManualPageTests.regenerate)",
            ".TH \(name.uppercased()) \(section) \"\" \"geoattrd \(ProductVersion.number)\" \"\(section == 8 ? "System Administration" : "User Commands")\"",
            ".nh",
            ".SH NAME",
            "\(name) \\- \(Self.text(command.abstract ?? ""))",
            ".SH SYNOPSIS",
        ]
        out += synopsis(command, path: [name])
        if let discussion = command.discussion, !discussion.isEmpty {
            out.append(".SH DESCRIPTION")
            out += Self.paragraphs(discussion)
        }
        out += options(of: command, heading: ".SH OPTIONS")
        let subcommands = (command.subcommands ?? []).filter(Self.shown)
        if !subcommands.isEmpty {
            out.append(".SH COMMANDS")
            for subcommand in subcommands { out += describe(subcommand, path: [name]) }
        }
        for (title, body) in extra {
            out.append(".SH \(title)")
            // A page does not refer to itself.
            out += body.filter { !$0.hasPrefix(".BR \(name) (") }
        }
        return out.joined(separator: "\n") + "\n"
    }

    private static func shown(_ command: ToolInfo.Command) -> Bool {
        command.shouldDisplay != false && command.commandName != "help"
    }

    private func describe(_ command: ToolInfo.Command, path: [String]) -> [String] {
        let full = path + [command.commandName]
        var out = [".SS \"\(full.joined(separator: " "))\""]
        if let abstract = command.abstract { out.append(Self.text(abstract)) }
        out.append(".PP")
        out += synopsis(command, path: path)
        if let discussion = command.discussion, !discussion.isEmpty { out += Self.paragraphs(discussion) }
        out += options(of: command, heading: nil)
        for subcommand in (command.subcommands ?? []).filter(Self.shown) { out += describe(subcommand, path: full) }
        return out
    }

    private static func arguments(_ command: ToolInfo.Command) -> [ToolInfo.Argument] {
        (command.arguments ?? []).filter { $0.shouldDisplay && !["help", "version"].contains($0.names?.first { $0.kind == "long" }?.name ?? "") }
    }

    private func synopsis(_ command: ToolInfo.Command, path: [String]) -> [String] {
        var words = ["\\fB\((path + [command.commandName]).joined(separator: " "))\\fR"]
        if path.isEmpty || path == [command.commandName] { words = ["\\fB\(command.commandName)\\fR"] }
        for argument in Self.arguments(command) {
            var word: String
            switch argument.kind {
            case "positional": word = "\\fI\(Self.text(argument.valueName ?? "value"))\\fR"
            case "flag": word = "\\fB\(Self.minus(Self.flagName(argument)))\\fR"
            default: word = "\\fB\(Self.minus(Self.flagName(argument)))\\fR \\fI\(Self.text(argument.valueName ?? "value"))\\fR"
            }
            if argument.isRepeating { word += " ..." }
            words.append(argument.isOptional ? "[\(word)]" : word)
        }
        if !(command.subcommands ?? []).filter(Self.shown).isEmpty { words.append("\\fIcommand\\fR") }
        return [".ad l", words.joined(separator: " "), ".ad"]
    }

    private func options(of command: ToolInfo.Command, heading: String?) -> [String] {
        let arguments = Self.arguments(command)
        guard !arguments.isEmpty else { return [] }
        var out = heading.map { [$0] } ?? []
        for argument in arguments {
            out.append(".TP")
            let names = (argument.names ?? []).map { Self.optionName($0) }
            switch argument.kind {
            case "positional": out.append("\\fI\(Self.text(argument.valueName ?? "value"))\\fR")
            case "flag": out.append(names.map { "\\fB\(Self.minus($0))\\fR" }.joined(separator: ", "))
            default: out.append(names.map { "\\fB\(Self.minus($0))\\fR" }.joined(separator: ", ") + " \\fI\(Self.text(argument.valueName ?? "value"))\\fR")
            }
            var text = Self.text(argument.abstract ?? "")
            if let values = argument.allValues, !values.isEmpty, argument.kind != "flag" {
                text += " One of: \(values.map(Self.text).joined(separator: ", "))."
            }
            if let value = argument.defaultValue, !value.isEmpty, argument.kind != "flag" { text += " Default: \(Self.text(value))." }
            out.append(text)
            if let discussion = argument.discussion, !discussion.isEmpty { out += Self.paragraphs(discussion) }
        }
        return out
    }

    private static func flagName(_ argument: ToolInfo.Argument) -> String {
        let names = argument.names ?? []
        let name = names.first { $0.kind != "short" } ?? names.first
        guard let name else { return "" }
        return optionName(name)
    }

    /// `--state-file` with every dash a minus sign, so that it can be copied and searched.
    private static func optionName(_ name: ToolInfo.Argument.Name) -> String {
        (name.kind == "short" ? "-" : "--") + name.name
    }

    /// Help text as page text: a block whose lines are indented keeps its lines, the rest is
    /// filled; paragraphs are split at blank lines.
    static func paragraphs(_ discussion: String) -> [String] {
        var out: [String] = []
        let blocks = discussion.split(separator: "\n\n", omittingEmptySubsequences: true)
        for block in blocks {
            var prose: [String] = []
            var listing: [String] = []
            func flushProse() {
                if !prose.isEmpty { out += [".PP", text(prose.joined(separator: " "))] }
                prose = []
            }
            func flushListing() {
                if !listing.isEmpty { out += [".PP", ".nf"] + listing.map { text($0) } + [".fi"] }
                listing = []
            }
            for line in block.split(separator: "\n") {
                if line.hasPrefix(" ") {
                    flushProse()
                    listing.append(String(line))
                } else {
                    flushListing()
                    prose.append(String(line))
                }
            }
            flushProse()
            flushListing()
        }
        return out
    }

    /// An option name for roff: every dash a minus sign.
    static func minus(_ name: String) -> String {
        name.replacing("-", with: "\\-")
    }

    /// Text for a roff line: backslashes escaped, options' dashes as minus signs, no line
    /// starting with a control character.
    static func text(_ text: String) -> String {
        var escaped = text.replacing("\\", with: "\\e").replacing("--", with: "\\-\\-")
        if escaped.hasPrefix(".") || escaped.hasPrefix("'") { escaped = "\\&" + escaped }
        return escaped
    }
}
