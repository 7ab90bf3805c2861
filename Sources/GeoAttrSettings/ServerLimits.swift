/// Limits that keep a misbehaving client from hurting the daemon or other clients.
public struct ServerLimits: Sendable, Hashable {
    /// Request line and headers.
    public var maximumHeadBytes = 8 * 1024
    public var maximumBodyBytes = 1024
    /// A request head must arrive completely within this time (slow clients).
    public var headTimeout: Duration = .seconds(10)
    /// A keep-alive connection with no request for this long is closed.
    public var idleTimeout: Duration = .seconds(60)
    /// The metrics socket's head and idle timeouts, when shorter than the API's
    /// (`ConnectionTimeouts.metricsSocket`).
    public var metricsConnectionTimeout: Duration = .seconds(5)
    public var maximumConnections = 1024
    /// Connections one uid may hold at once (root and the daemon's uid are exempt), so that
    /// one client cannot take every slot of `maximumConnections`.
    public var maximumConnectionsPerUID = 64
    /// Server-Sent Events heartbeat comment interval on `/v1/watch`.
    public var heartbeatInterval: Duration = .seconds(30)
    /// `POST /v1/refresh?wait=` is capped at this.
    public var maximumRefreshWait: Duration = .seconds(120)

    public init() {}
}
