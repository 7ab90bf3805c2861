/// The forms of the served attributes: `GET /v1/attributes?format=`, `geoattrctl get --format`
/// and the daemon's file outputs all name and render them here, so that a format is added in
/// this file and its renderer alone.
public enum AttributeFormat: String, Sendable, Hashable, CaseIterable {
    case json
    case otel
    case env
    case prometheus

    /// The answer's `content-type`.
    public var mediaType: String {
        switch self {
        case .json: "application/json"
        case .otel, .env: "text/plain; charset=utf-8"
        case .prometheus: "text/plain; version=0.0.4; charset=utf-8"
        }
    }

    /// What the format holds, in the words of `geoattrctl get --help`.
    public var summary: String {
        switch self {
        case .json: "the API's document"
        case .otel: "OTEL_RESOURCE_ATTRIBUTES syntax"
        case .env: #"GEO_*="..." lines for a shell or systemd EnvironmentFile="#
        case .prometheus: "an info metric"
        }
    }

    /// The names as a sentence lists them: `json, otel, env or prometheus`.
    public static var choices: String {
        let names = allCases.map(\.rawValue)
        guard let last = names.last, names.count > 1 else { return names.joined() }
        return names.dropLast().joined(separator: ", ") + " or " + last
    }

    public func render(_ answer: AttributesAnswer) -> [UInt8] {
        switch self {
        case .json: APIJSON.encode(answer.document)
        case .otel: Array((OTelResourceAttributes.text(answer.document.attributes) + "\n").utf8)
        case .env: Array(GeoVariables.text(answer.document.attributes).utf8)
        case .prometheus: Array(PrometheusLocation.text(answer).utf8)
        }
    }
}
