public import CoreMetrics
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

/// swift-metrics' factory over the Prometheus registry, as swift-prometheus's own, but giving each
/// family its help text: the registry keeps a family's first help text and refuses another.
public struct DescribedMetricsFactory: MetricsFactory {
    private let registry: PrometheusCollectorRegistry
    private let timerBuckets: [Duration] = [
        .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .milliseconds(2500), .seconds(5),
        .seconds(10), .seconds(30), .seconds(60), .seconds(120),
    ]
    private let valueBuckets: [Double] = [5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000]

    public init(registry: PrometheusCollectorRegistry) {
        self.registry = registry
    }

    public func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler {
        registry.makeCounter(descriptor: MetricFamilies.descriptor(label), labels: dimensions)
    }

    public func makeFloatingPointCounter(label: String, dimensions: [(String, String)]) -> any FloatingPointCounterHandler {
        registry.makeCounter(descriptor: MetricFamilies.descriptor(label), labels: dimensions)
    }

    public func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
        guard aggregate else { return registry.makeGauge(descriptor: MetricFamilies.descriptor(label), labels: dimensions) }
        return registry.makeValueHistogram(descriptor: MetricFamilies.descriptor(label), labels: dimensions, buckets: valueBuckets)
    }

    public func makeMeter(label: String, dimensions: [(String, String)]) -> any MeterHandler {
        registry.makeGauge(descriptor: MetricFamilies.descriptor(label), labels: dimensions)
    }

    public func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler {
        registry.makeDurationHistogram(descriptor: MetricFamilies.descriptor(label), labels: dimensions, buckets: timerBuckets)
    }

    public func destroyCounter(_ handler: any CounterHandler) {
        if let counter = handler as? Prometheus.Counter { registry.unregisterCounter(counter) }
    }

    public func destroyFloatingPointCounter(_ handler: any FloatingPointCounterHandler) {
        if let counter = handler as? Prometheus.Counter { registry.unregisterCounter(counter) }
    }

    public func destroyRecorder(_ handler: any RecorderHandler) {
        if let gauge = handler as? Prometheus.Gauge { registry.unregisterGauge(gauge) }
        if let histogram = handler as? ValueHistogram { registry.unregisterValueHistogram(histogram) }
    }

    public func destroyMeter(_ handler: any MeterHandler) {
        if let gauge = handler as? Prometheus.Gauge { registry.unregisterGauge(gauge) }
    }

    public func destroyTimer(_ handler: any TimerHandler) {
        if let histogram = handler as? DurationHistogram { registry.unregisterDurationHistogram(histogram) }
    }
}
