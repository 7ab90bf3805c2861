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

/// The part of the status the scheduler knows and alone writes: the power state, the fixes and
/// the refresh budget.
public struct SchedulerStatus: Sendable, Hashable {
    public var powerState: PowerState
    public var fixInFlight: Bool
    public var lastAttempt: AttemptRecord?
    /// When the next scheduled fix is due (system clock), `nil` when none is scheduled.
    public var nextFixAt: UTCTimestamp?
    public var refreshTokens: Int
    /// Whether gpsd answered on the last attempt; `nil` before any.
    public var gpsdReachable: Bool?
    public var refreshesAccepted: Int
    public var refreshesRefused: Int

    public init(powerState: PowerState) {
        self.powerState = powerState
        fixInFlight = false
        refreshTokens = 0
        refreshesAccepted = 0
        refreshesRefused = 0
    }
}
