import FoundationEssentials
import GeoAttrCore
public import GeoAttrModel

/// The answer formats of `GET /v1/attributes?format=`.
public enum AttributeFormat: String, Sendable, CaseIterable {
    case json
    case otel
    case env
    case prometheus

    var contentType: String {
        switch self {
        case .json: "application/json"
        case .otel, .env: "text/plain; charset=utf-8"
        case .prometheus: "text/plain; version=0.0.4; charset=utf-8"
        }
    }
}

/// Renders an `AttributeView` in each format.
public enum AttributeRenderer {
    public static func render(_ view: AttributeView, as format: AttributeFormat) -> [UInt8] {
        switch format {
        case .json: json(view)
        case .otel: Array((otel(view.attributes) + "\n").utf8)
        case .env: Array(env(view.attributes).utf8)
        case .prometheus: Array(prometheus(view).utf8)
        }
    }

    public static func json(_ view: AttributeView) -> [UInt8] {
        let result = view.served.result
        let exact = view.grant.level == .exact
        let document = AttributesDocument(
            attributes: view.attributes,
            fixTime: result.fix.time.iso8601,
            updatedAt: result.updatedAt.iso8601,
            ageS: view.ageSeconds,
            stale: view.stale,
            state: view.state.rawValue,
            source: result.source.rawValue,
            generation: result.generation,
            precision: view.grant.level.rawValue,
            errorM: exact ? result.fix.horizontalErrorMeters : nil,
            indexVersion: result.indexVersion)
        return encode(document)
    }

    static func encode(_ value: some Encodable) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? Array(encoder.encode(value))) ?? Array("{}".utf8)
    }

    /// `key=value,...` as OTEL_RESOURCE_ATTRIBUTES wants it: values percent-encoded (everything
    /// but unreserved characters), keys in a stable order.
    public static func otel(_ attributes: [String: AttributeValue]) -> String {
        attributes.sorted { $0.key < $1.key }
            .map { "\($0.key)=\(percentEncoded($0.value.description))" }
            .joined(separator: ",")
    }

    static func percentEncoded(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = Array("0123456789ABCDEF".utf8)
                out += "%" + String(decoding: [hex[Int(byte >> 4)], hex[Int(byte & 0xF)]], as: UTF8.self)
            }
        }
        return out
    }

    /// `GEO_COUNTRY_ISO_CODE="US"` lines: double-quoted with `\`, `"`, `$` and backquote
    /// escaped, which bash, dash and systemd's EnvironmentFile= read back unchanged. Escaping
    /// goes scalar by scalar: a quote followed by a combining mark is still a quote to a shell.
    /// Control characters (U+0000 to U+001F and U+007F) cannot be carried through an environment
    /// and are removed. Unicode's noncharacters (U+FDD0 to U+FDEF, U+FFFE, U+FFFF and the last
    /// two of every plane) become U+FFFD: systemd takes them for invalid UTF-8 and refuses the
    /// whole file, every other variable in it with them.
    public static func env(_ attributes: [String: AttributeValue]) -> String {
        attributes.sorted { $0.key < $1.key }.map { key, value in
            let name = key.uppercased().map { $0.isLetter || $0.isNumber ? String($0) : "_" }.joined()
            var quoted = String.UnicodeScalarView()
            quoted.append("\"")
            for scalar in value.description.unicodeScalars {
                if scalar.value < 0x20 || scalar.value == 0x7F { continue }
                if scalar.properties.isNoncharacterCodePoint {
                    quoted.append("\u{FFFD}")
                    continue
                }
                if scalar == "\\" || scalar == "\"" || scalar == "$" || scalar == "`" { quoted.append("\\") }
                quoted.append(scalar)
            }
            quoted.append("\"")
            return "\(name)=\(String(quoted))\n"
        }.joined()
    }

    /// The served location for Prometheus: an info metric with the place as labels, the
    /// coordinates as gauges of their own (a moving device would otherwise make a new series at
    /// every fix), when the location was obtained (so that its age, `time() - x`, stays right in a
    /// textfile written once per fix), and when the text was written (how long ago a textfile
    /// was last written; an age written into it would be frozen there).
    public static func prometheus(_ view: AttributeView) -> String {
        let attributes = view.attributes.sorted { $0.key < $1.key }
        let labels = attributes.compactMap { key, value -> String? in
            guard case .string(let text) = value else { return nil }
            return "\(key.replacingDots())=\"\(escapedLabel(text))\""
        }
        var text = family("geoattrd_location_info", "The place of the served location, as labels; always 1.")
        text += "geoattrd_location_info\(labels.isEmpty ? "" : "{\(labels.joined(separator: ","))}") 1\n"
        for (key, name, axis) in [
            ("geo.location.lat", "geoattrd_location_latitude_degrees", "Latitude"), ("geo.location.lon", "geoattrd_location_longitude_degrees", "Longitude"),
        ] {
            guard case .double(let degrees) = view.attributes[key] else { continue }
            text += family(name, "\(axis) of the served location, in degrees, at the client's precision.")
            text += "\(name) \(degrees)\n"
        }
        text += family("geoattrd_location_updated_timestamp_seconds", "When the served location was obtained, in seconds since the epoch.")
        text += "geoattrd_location_updated_timestamp_seconds \(view.served.result.updatedAt.seconds)\n"
        text += family("geoattrd_location_written_timestamp_seconds", "When this text was written (a textfile's last write), in seconds since the epoch.")
        // From the age the view was rendered at, not the clock: a cached rendering (keyed by
        // the age in whole seconds) stays true to the second.
        text += "geoattrd_location_written_timestamp_seconds \(view.served.result.updatedAt.seconds &+ view.ageSeconds)\n"
        return text
    }

    private static func family(_ name: String, _ help: String) -> String {
        "# HELP \(name) \(help)\n# TYPE \(name) gauge\n"
    }

    /// A label value as the Prometheus text format wants it: `\`, `"` and newline escaped,
    /// scalar by scalar, so that a combining mark after a quote cannot hide it.
    static func escapedLabel(_ text: String) -> String {
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": out.append(contentsOf: "\\\\".unicodeScalars)
            case "\"": out.append(contentsOf: "\\\"".unicodeScalars)
            case "\n": out.append(contentsOf: "\\n".unicodeScalars)
            default: out.append(scalar)
            }
        }
        return String(out)
    }
}

extension String {
    fileprivate func replacingDots() -> String {
        map { $0 == "." ? "_" : String($0) }.joined()
    }
}
