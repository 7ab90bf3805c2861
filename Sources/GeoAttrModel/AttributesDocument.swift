/// The JSON of `GET /v1/attributes` and of each `/v1/watch` event, shared by the server and
/// the client library.
public struct AttributesDocument: Sendable, Hashable, Codable {
    /// The OpenTelemetry attributes this client may see, by their semantic-convention names.
    public var attributes: [String: AttributeValue]
    public var fixTime: String
    public var updatedAt: String
    public var ageS: Int64
    /// Older than the TTL: served because nothing newer exists.
    public var stale: Bool
    public var state: String
    public var source: String
    public var generation: UInt64
    /// The precision level this client is entitled to.
    public var precision: String
    /// Only for clients entitled to `exact`.
    public var errorM: Double?
    public var indexVersion: String?

    public init(
        attributes: [String: AttributeValue], fixTime: String, updatedAt: String, ageS: Int64, stale: Bool, state: String,
        source: String, generation: UInt64, precision: String, errorM: Double?, indexVersion: String?
    ) {
        self.attributes = attributes
        self.fixTime = fixTime
        self.updatedAt = updatedAt
        self.ageS = ageS
        self.stale = stale
        self.state = state
        self.source = source
        self.generation = generation
        self.precision = precision
        self.errorM = errorM
        self.indexVersion = indexVersion
    }

    enum CodingKeys: String, CodingKey {
        case attributes, stale, state, source, generation, precision
        case fixTime = "fix_time", updatedAt = "updated_at", ageS = "age_s", errorM = "error_m"
        case indexVersion = "index_version"
    }
}
