public import CoreMetrics
public import Prometheus

/// swift-metrics' factory over the Prometheus registry, as swift-prometheus's own, but giving each
/// family its help text: the registry keeps a family's first help text and refuses another.
public struct DescribedMetricsFactory: MetricsFactory {
    private let registry: PrometheusCollectorRegistry
    private let timerBuckets: [Duration]
    private let valueBuckets: [Double]

    public init(registry: PrometheusCollectorRegistry) {
        self.registry = registry
        let defaults = PrometheusMetricsFactory(registry: registry)
        // A fix may take up to gpsd's timeout: the default buckets end at 10 s.
        timerBuckets = defaults.defaultDurationHistogramBuckets + [.seconds(30), .seconds(60), .seconds(120)]
        valueBuckets = defaults.defaultValueHistogramBuckets
    }

    public func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler {
        registry.makeCounter(descriptor: MetricFamilies.descriptor(label: label), labels: dimensions)
    }

    public func makeFloatingPointCounter(label: String, dimensions: [(String, String)]) -> any FloatingPointCounterHandler {
        registry.makeCounter(descriptor: MetricFamilies.descriptor(label: label), labels: dimensions)
    }

    public func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
        guard aggregate else { return registry.makeGauge(descriptor: MetricFamilies.descriptor(label: label), labels: dimensions) }
        return registry.makeValueHistogram(descriptor: MetricFamilies.descriptor(label: label), labels: dimensions, buckets: valueBuckets)
    }

    public func makeMeter(label: String, dimensions: [(String, String)]) -> any MeterHandler {
        registry.makeGauge(descriptor: MetricFamilies.descriptor(label: label), labels: dimensions)
    }

    public func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler {
        registry.makeDurationHistogram(descriptor: MetricFamilies.descriptor(label: label), labels: dimensions, buckets: timerBuckets)
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
