import GeoAttrCore
public import Prometheus

/// The catalogue's families as the Prometheus registry takes them, and the series that exist
/// from the start at zero, so that a scrape shows the whole set before anything has happened.
public enum MetricFamilies {
    /// `family`'s name and help text as the registry takes them.
    static func descriptor(_ family: MetricFamily) -> MetricNameDescriptor {
        MetricNameDescriptor(metricName: family.name, unitName: "", helpText: family.help)
    }

    /// The descriptor of the family swift-metrics calls `label`; no help text for a name the
    /// catalogue does not list (the metrics tests fail on one).
    static func descriptor(label: String) -> MetricNameDescriptor {
        MetricCatalogue.family(named: label).map { descriptor($0) } ?? MetricNameDescriptor(metricName: label, unitName: "", helpText: "")
    }

    /// Creates the families whose label values are known in advance, at zero.
    public static func registerAtZero(in registry: PrometheusCollectorRegistry) {
        let (fixes, refreshes) = (MetricCatalogue.fixes, MetricCatalogue.refreshRequests)
        for outcome in MetricCatalogue.fixOutcomes {
            _ = registry.makeCounter(descriptor: descriptor(fixes), labels: fixes.labels([outcome]))
        }
        for decision in MetricCatalogue.refreshDecisions {
            _ = registry.makeCounter(descriptor: descriptor(refreshes), labels: refreshes.labels([decision]))
        }
        registry.makeGauge(descriptor: descriptor(MetricCatalogue.connectedClients)).set(Int64(0))
        registry.makeGauge(descriptor: descriptor(MetricCatalogue.updateSubscribers)).set(Int64(0))
    }
}
