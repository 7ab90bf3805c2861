/// The JSON of `POST /v1/refresh` without `wait`, or when the wait ended first.
public struct RefreshDocument: Sendable, Equatable, Codable {
    /// What the daemon did with the request.
    public enum Decision: String, Sendable, Hashable, Codable {
        /// A fix began for this request.
        case started
        /// A fix was already under way; the request waits on it.
        case joined
        /// The refresh budget is spent.
        case refused
    }

    public var refresh: Decision
    /// Only after a wait that ended first: the fix goes on.
    public var stillRunning: Bool?

    public init(refresh: Decision, stillRunning: Bool? = nil) {
        self.refresh = refresh
        self.stillRunning = stillRunning
    }

    enum CodingKeys: String, CodingKey {
        case refresh
        case stillRunning = "still_running"
    }
}
