public import GeoAttrModel

/// What the daemon is doing, for `GET /v1/status` and the systemd STATUS= line. Each part has
/// one writer: the scheduler its own, the index's reloader the index, the configuration reload
/// the reload's refusal; the rest is derived from them.
public struct DaemonStatus: Sendable, Hashable {
    public var scheduler: SchedulerStatus
    public var index: IndexState
    /// Why the last reload was refused (the running configuration stays); `nil` once one is applied.
    public var reloadRefused: String?

    public init(powerState: PowerState) {
        scheduler = SchedulerStatus(powerState: powerState)
        index = .notLoaded
    }

    /// Reasons the daemon serves less than it could.
    public var degraded: [String] { index.degradedReasons }
}
