import CoreMetrics
import GeoAttrModel

/// The scheduler's metrics through the swift-metrics API (backends are the executable's
/// business). None carries location data.
public enum SchedulerMetrics {
    static func attemptEnded(_ result: Result<Fix, FixError>) {
        let outcome: String
        switch result {
        case .success: outcome = "fix"
        case .failure(let error): outcome = error.code
        }
        Counter(label: "geoattrd_fixes_total", dimensions: [("outcome", outcome)]).increment()
        if case .success(let fix) = result, let milliseconds = fix.timeToFixMilliseconds {
            Timer(label: "geoattrd_time_to_fix_seconds").recordNanoseconds(Int64(milliseconds * 1_000_000))
        }
    }

    /// What the refresh budget decides of a forced refresh, the values of `decision`.
    public static let refreshDecisions = ["accepted", "joined", "refused"]

    static func refresh(_ decision: String) {
        Counter(label: "geoattrd_refresh_requests_total", dimensions: [("decision", decision)]).increment()
    }
}
