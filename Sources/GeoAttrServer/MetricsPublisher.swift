import CoreMetrics

/// Metrics recorded at scrape time.
enum MetricsPublisher {
    static func recordCacheAge(_ age: Duration) {
        Gauge(label: "geoattrd_cache_age_seconds").record(Double(age.components.seconds))
    }

    /// Open result streams (watch clients, file outputs, systemd status).
    static func recordUpdateSubscribers(_ count: Int) {
        Gauge(label: "geoattrd_update_subscribers").record(count)
    }
}
