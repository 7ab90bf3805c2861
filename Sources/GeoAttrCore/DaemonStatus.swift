public import GeoAttrModel

/// How the last fix attempt ended.
public struct AttemptRecord: Sendable, Hashable {
    public enum Trigger: String, Sendable, Hashable {
        case schedule
        case refresh
    }

    public var trigger: Trigger
    public var startedAt: UTCTimestamp
    public var endedAt: UTCTimestamp
    /// `nil` on success.
    public var error: FixError?
    /// The fix was accepted as a fallback: within the looser bound, when the attempt ended.
    public var fallback: Bool

    public init(trigger: Trigger, startedAt: UTCTimestamp, endedAt: UTCTimestamp, error: FixError?, fallback: Bool = false) {
        self.trigger = trigger
        self.startedAt = startedAt
        self.endedAt = endedAt
        self.error = error
        self.fallback = fallback
    }
}

/// What the daemon is doing, for `GET /v1/status` and the systemd STATUS= line.
public struct DaemonStatus: Sendable, Hashable {
    public var powerState: PowerState
    public var fixInFlight: Bool
    public var lastAttempt: AttemptRecord?
    /// When the next scheduled fix is due (system clock), `nil` when none is scheduled.
    public var nextFixAt: UTCTimestamp?
    public var refreshTokens: Int
    /// Whether gpsd answered on the last attempt; `nil` before any.
    public var gpsdReachable: Bool?
    /// The geocoder index in service, `nil` when degraded.
    public var indexVersion: String?
    /// Why the index file was refused at its last load (its path and the reason), whether or not
    /// an earlier index stays in service; `nil` once a load succeeds.
    public var indexProblem: String?
    /// Why the last reload was refused (the running configuration stays); `nil` once one is applied.
    public var reloadRefused: String?
    /// Reasons the daemon serves less than it could.
    public var degraded: [String]
    public var refreshesAccepted: Int
    public var refreshesRefused: Int

    public init(powerState: PowerState) {
        self.powerState = powerState
        fixInFlight = false
        refreshTokens = 0
        degraded = []
        refreshesAccepted = 0
        refreshesRefused = 0
    }
}
