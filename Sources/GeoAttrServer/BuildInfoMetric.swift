import GeoAttrCore
import GeoAttrModel
import Prometheus
import Synchronization

/// `geoattrd_build_info{version,index_version} 1`: its labels follow the index in service, and
/// the series of an index swapped out goes with it.
final class BuildInfoMetric: Sendable {
    private struct Series {
        var indexVersion: String
        var gauge: Prometheus.Gauge
    }

    private let current = Mutex<Series?>(nil)

    func record(indexVersion: String?, in registry: PrometheusCollectorRegistry) {
        let index = indexVersion ?? "none"
        current.withLock { current in
            if let current, current.indexVersion == index { return }
            if let previous = current { registry.unregisterGauge(previous.gauge) }
            let gauge = registry.makeGauge(
                descriptor: MetricFamilies.descriptor(MetricCatalogue.buildInfo),
                labels: MetricCatalogue.buildInfo.labels([ProductVersion.number, index]))
            gauge.set(Int64(1))
            current = Series(indexVersion: index, gauge: gauge)
        }
    }
}
