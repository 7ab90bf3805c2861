/// The JSON of `GET /v1/status`: the daemon encodes it, `geoattrctl status` prints it and
/// `geoattrctl doctor` reads it. Location data in it is cut to the client's grant like
/// everywhere else.
public struct StatusDocument: Sendable, Equatable, Codable {
    /// The last fix attempt.
    public struct Attempt: Sendable, Equatable, Codable {
        /// What started it: `schedule` (a fix came due) or `refresh` (a refresh request: the API or SIGUSR1).
        public var trigger: String
        public var startedAt: String
        public var endedAt: String
        /// `fix`, or the error code of the failure.
        public var result: String
        public var error: String?
        /// On success: whether the fix was a fallback.
        public var fallback: Bool?

        /// An attempt that ended in a fix (`failure` nil; `fallback` says whether it was one) or in
        /// a failure (its error code and what it said; `fallback` is not reported).
        public init(trigger: String, startedAt: String, endedAt: String, failure: (code: String, message: String)?, fallback: Bool) {
            self.trigger = trigger
            self.startedAt = startedAt
            self.endedAt = endedAt
            result = failure?.code ?? "fix"
            error = failure?.message
            self.fallback = failure == nil ? fallback : nil
        }

        enum CodingKeys: String, CodingKey {
            case trigger, result, error, fallback
            case startedAt = "started_at", endedAt = "ended_at"
        }
    }

    /// `foreground` or `background`.
    public var state: String
    public var fixInFlight: Bool
    public var lastAttempt: Attempt?
    public var nextFixAt: String?
    public var refreshTokens: Int
    public var refreshesAccepted: Int
    public var refreshesRefused: Int
    public var gpsdReachable: Bool?
    public var indexVersion: String?
    /// Why the daemon refused the index file it was given (it keeps the one it had).
    public var indexProblem: String?
    /// What the daemon cannot do now, one sentence each.
    public var degraded: [String]
    public var cacheAgeS: Int64?
    public var generation: UInt64?
    /// The precision level this client is entitled to.
    public var precision: String

    public init(
        state: String, fixInFlight: Bool, lastAttempt: Attempt?, nextFixAt: String?, refreshTokens: Int,
        refreshesAccepted: Int, refreshesRefused: Int, gpsdReachable: Bool?, indexVersion: String?, indexProblem: String?,
        degraded: [String], cacheAgeS: Int64?, generation: UInt64?, precision: String
    ) {
        self.state = state
        self.fixInFlight = fixInFlight
        self.lastAttempt = lastAttempt
        self.nextFixAt = nextFixAt
        self.refreshTokens = refreshTokens
        self.refreshesAccepted = refreshesAccepted
        self.refreshesRefused = refreshesRefused
        self.gpsdReachable = gpsdReachable
        self.indexVersion = indexVersion
        self.indexProblem = indexProblem
        self.degraded = degraded
        self.cacheAgeS = cacheAgeS
        self.generation = generation
        self.precision = precision
    }

    enum CodingKeys: String, CodingKey {
        case state, degraded, generation, precision
        case fixInFlight = "fix_in_flight", lastAttempt = "last_attempt", nextFixAt = "next_fix_at"
        case refreshTokens = "refresh_tokens", refreshesAccepted = "refreshes_accepted", refreshesRefused = "refreshes_refused"
        case gpsdReachable = "gpsd_reachable", indexVersion = "index_version", cacheAgeS = "cache_age_s"
        case indexProblem = "index_problem"
    }
}
