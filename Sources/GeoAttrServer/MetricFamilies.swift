import CoreMetrics
import GeoAttrCore
import GeoAttrModel
public import Prometheus

/// Every family `/metrics` exposes, with its help text, and the label values that exist from
/// the start at zero, so that a scrape shows the whole set before anything has happened.
public enum MetricFamilies {
    static let help: [String: String] = [
        "geoattrd_fixes_total": "Fix attempts, by how they ended: fix, or the error code.",
        "geoattrd_time_to_fix_seconds": "Time from the start of an attempt to its accepted fix.",
        "geoattrd_refresh_requests_total": "Forced refreshes (SIGUSR1, POST /v1/refresh), by what the refresh budget decided.",
        "geoattrd_cache_age_seconds": "Age of the served location at the scrape.",
        "geoattrd_connected_clients": "API connections open.",
        "geoattrd_update_subscribers": "Open result streams: watch clients, output files, systemd's status.",
        "geoattrd_requests_total": "API requests, by endpoint and status.",
        "geoattrd_build_info": "The running release and the index in service, as labels; always 1.",
    ]

    /// A family's name and help text (empty for one not listed) as the registry takes them.
    static func descriptor(_ name: String) -> MetricNameDescriptor {
        MetricNameDescriptor(metricName: name, unitName: "", helpText: help[name] ?? "")
    }

    /// Creates the families whose label values are known in advance, at zero.
    public static func registerAtZero(in registry: PrometheusCollectorRegistry) {
        for outcome in ["fix"] + FixError.codes {
            _ = counter(registry, "geoattrd_fixes_total", [("outcome", outcome)])
        }
        for decision in SchedulerMetrics.refreshDecisions {
            _ = counter(registry, "geoattrd_refresh_requests_total", [("decision", decision)])
        }
        registry.makeGauge(descriptor: descriptor("geoattrd_connected_clients")).set(Int64(0))
        registry.makeGauge(descriptor: descriptor("geoattrd_update_subscribers")).set(Int64(0))
    }

    private static func counter(_ registry: PrometheusCollectorRegistry, _ name: String, _ labels: [(String, String)]) -> Prometheus.Counter {
        registry.makeCounter(descriptor: descriptor(name), labels: labels)
    }
}
