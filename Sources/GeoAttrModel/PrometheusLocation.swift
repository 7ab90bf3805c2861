/// The `prometheus` format and `outputs.prometheus_file`: the served location for Prometheus.
/// An info metric with the place as labels, the coordinates as gauges of their own (a moving
/// device would otherwise make a new series at every fix), when the location was obtained (so
/// that its age, `time() - x`, stays right in a textfile written once per fix), and when the
/// text was written (how long ago a textfile was last written; an age written into it would be
/// frozen there).
public enum PrometheusLocation {
    public static func text(_ answer: AttributesAnswer) -> String {
        let attributes = answer.document.attributes.sorted { $0.key < $1.key }
        let labels = attributes.compactMap { key, value -> String? in
            guard case .string(let text) = value else { return nil }
            return "\(key.replacingDots())=\"\(escapedLabel(text))\""
        }
        var text = family("geoattrd_location_info", "The place of the served location, as labels; always 1.")
        text += "geoattrd_location_info\(labels.isEmpty ? "" : "{\(labels.joined(separator: ","))}") 1\n"
        for (key, name, axis) in [
            ("geo.location.lat", "geoattrd_location_latitude_degrees", "Latitude"), ("geo.location.lon", "geoattrd_location_longitude_degrees", "Longitude"),
        ] {
            guard case .double(let degrees) = answer.document.attributes[key] else { continue }
            text += family(name, "\(axis) of the served location, in degrees, at the client's precision.")
            text += "\(name) \(degrees)\n"
        }
        text += family("geoattrd_location_updated_timestamp_seconds", "When the served location was obtained, in seconds since the epoch.")
        text += "geoattrd_location_updated_timestamp_seconds \(answer.updatedAtSeconds)\n"
        text += family("geoattrd_location_written_timestamp_seconds", "When this text was written (a textfile's last write), in seconds since the epoch.")
        // From the age the answer was made at, not the clock: a cached rendering (keyed by the
        // age in whole seconds) stays true to the second.
        text += "geoattrd_location_written_timestamp_seconds \(answer.updatedAtSeconds &+ answer.document.ageS)\n"
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
