public import GeoAttrModel

/// Every family of the daemon's own metrics (`/metrics`), with its help text and the label
/// values known in advance. Every counter, gauge and histogram is made from a family here; the
/// location's own Prometheus text (`?format=prometheus`, the textfile) is the model's and not
/// listed.
public enum MetricCatalogue {
    public static let fixes = MetricFamily(
        "geoattrd_fixes_total", .counter, help: "Fix attempts, by how they ended: fix, or the error code.", labels: ["outcome"])
    public static let timeToFix = MetricFamily(
        "geoattrd_time_to_fix_seconds", .histogram, help: "Time from the start of an attempt to its accepted fix.")
    public static let refreshRequests = MetricFamily(
        "geoattrd_refresh_requests_total", .counter,
        help: "Forced refreshes (SIGUSR1, POST /v1/refresh), by what the refresh budget decided.", labels: ["decision"])
    public static let cacheAge = MetricFamily(
        "geoattrd_cache_age_seconds", .gauge, help: "Age of the served location at the scrape.")
    public static let connectedClients = MetricFamily(
        "geoattrd_connected_clients", .gauge, help: "API connections open.")
    public static let updateSubscribers = MetricFamily(
        "geoattrd_update_subscribers", .gauge, help: "Open result streams: watch clients, output files, systemd's status.")
    public static let requests = MetricFamily(
        "geoattrd_requests_total", .counter, help: "API requests, by endpoint and status.", labels: ["endpoint", "status"])
    public static let buildInfo = MetricFamily(
        "geoattrd_build_info", .gauge, help: "The running release and the index in service, as labels; always 1.",
        labels: ["version", "index_version"])

    /// Every family, in the order the documentation lists them.
    public static let all = [fixes, timeToFix, refreshRequests, cacheAge, connectedClients, updateSubscribers, requests, buildInfo]

    private static let byName = Dictionary(uniqueKeysWithValues: all.map { ($0.name, $0) })

    /// The family called `name`, `nil` for a name the daemon does not expose.
    public static func family(named name: String) -> MetricFamily? { byName[name] }

    // MARK: Label values

    /// `outcome` of `geoattrd_fixes_total`: `fix`, or the error's code.
    public static func fixOutcome(_ result: Result<Fix, FixError>) -> String {
        switch result {
        case .success: "fix"
        case .failure(let error): error.code
        }
    }

    /// Every `outcome`, exposed at zero from the start.
    public static let fixOutcomes = ["fix"] + FixError.codes

    /// `decision` of `geoattrd_refresh_requests_total`.
    public static func refreshDecision(_ outcome: Scheduler.RefreshOutcome) -> String {
        switch outcome {
        case .accepted: "accepted"
        case .joined: "joined"
        case .refused: "refused"
        }
    }

    /// Every `decision`, exposed at zero from the start.
    public static let refreshDecisions = [Scheduler.RefreshOutcome.accepted, .joined, .refused(retryAfter: .zero)].map(refreshDecision)
}
