import CoreMetrics
import GeoAttrModel

/// The scheduler's metrics through the swift-metrics API (backends are the executable's
/// business). None carries location data.
enum SchedulerMetrics {
    static func attemptEnded(_ result: Result<Fix, FixError>) {
        MetricCatalogue.fixes.counter(MetricCatalogue.fixOutcome(result)).increment()
        if case .success(let fix) = result, let milliseconds = fix.timeToFixMilliseconds {
            MetricCatalogue.timeToFix.timer().recordNanoseconds(Int64(milliseconds * 1_000_000))
        }
    }

    static func refresh(_ outcome: Scheduler.RefreshOutcome) {
        MetricCatalogue.refreshRequests.counter(MetricCatalogue.refreshDecision(outcome)).increment()
    }
}
