/// The schedule's knobs; every one is a configuration key (see config/geoattrd.yaml).
public struct ScheduleConfiguration: Sendable, Hashable {
    /// A result older than this is refreshed (the cache TTL).
    public var ttl: Duration = .seconds(3600)
    /// A result older than this is no longer served.
    public var expireAfter: Duration = .seconds(86_400)
    /// Backoff after a failed scheduled fix: first delay, and the cap.
    public var retryInitial: Duration = .seconds(30)
    public var retryMaximum: Duration = .seconds(1800)
    /// Forced refreshes: bucket size and one token back every `refreshInterval`.
    public var refreshBurst: Int = 6
    public var refreshInterval: Duration = .seconds(600)
    /// A new fix this close to the previous one keeps the previous geocode.
    public var stationaryDistanceMeters: Double = 150

    public init() {}
}
