import CoreMetrics
import GeoAttrCore

/// Metrics recorded at scrape time.
enum MetricsPublisher {
    static func recordCacheAge(_ age: Duration) {
        MetricCatalogue.cacheAge.gauge().record(Double(age.components.seconds))
    }

    /// Open result streams (watch clients, file outputs, systemd status).
    static func recordUpdateSubscribers(_ count: Int) {
        MetricCatalogue.updateSubscribers.gauge().record(count)
    }
}
