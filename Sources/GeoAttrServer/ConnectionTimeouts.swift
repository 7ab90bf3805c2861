import GeoAttrSettings
/// How long a connection may take to send a request head, and stay idle between requests.
/// Each socket has its own: the API's come from the configuration, the metrics socket's are
/// short whatever the API's are.
struct ConnectionTimeouts: Sendable, Hashable {
    var head: Duration
    var idle: Duration

    /// The API socket's: `api.head_timeout_s` and `api.idle_timeout_s`.
    init(_ limits: ServerLimits) {
        head = limits.headTimeout
        idle = limits.idleTimeout
    }

    /// The metrics socket's: at most `ServerLimits.metricsConnectionTimeout` each. Behind the
    /// loopback relay every local user is one source and the relay has no per-source limit, so
    /// a connection that says nothing must give its slot back within seconds, not a minute; a
    /// scraper opens a new connection each scrape anyway.
    static func metricsSocket(_ limits: ServerLimits) -> ConnectionTimeouts {
        var timeouts = ConnectionTimeouts(limits)
        timeouts.head = min(timeouts.head, limits.metricsConnectionTimeout)
        timeouts.idle = min(timeouts.idle, limits.metricsConnectionTimeout)
        return timeouts
    }
}
