public import CoreMetrics

/// One family of the daemon's own metrics, as `/metrics` exposes it. Its name, help text and
/// labels are what dashboards and alerts are written against: they change only with a release
/// note.
public struct MetricFamily: Sendable, Hashable {
    /// The Prometheus type the family is exposed as.
    public enum Kind: String, Sendable, Hashable {
        case counter
        case gauge
        case histogram
    }

    public let name: String
    public let kind: Kind
    /// The `# HELP` text.
    public let help: String
    /// The label names every series of the family carries, in this order.
    public let labelNames: [String]

    init(_ name: String, _ kind: Kind, help: String, labels: [String] = []) {
        self.name = name
        self.kind = kind
        self.help = help
        labelNames = labels
    }

    /// The labels of one series: `values` in the order of `labelNames`.
    public func labels(_ values: [String]) -> [(String, String)] {
        // A series with other labels would be a second family under one name, which Prometheus
        // refuses: caught in debug builds and tests.
        assert(values.count == labelNames.count, "\(name) takes the labels \(labelNames), not \(values.count) values")
        return Array(zip(labelNames, values))
    }

    /// The family's counter for the label values `labelValues` (through swift-metrics: the
    /// executable's backend).
    public func counter(_ labelValues: String...) -> Counter {
        assert(kind == .counter, "\(name) is a \(kind.rawValue)")
        return Counter(label: name, dimensions: labels(labelValues))
    }

    /// The family's gauge for the label values `labelValues`.
    public func gauge(_ labelValues: String...) -> Gauge {
        assert(kind == .gauge, "\(name) is a \(kind.rawValue)")
        return Gauge(label: name, dimensions: labels(labelValues))
    }

    /// The family's histogram of durations for the label values `labelValues`.
    public func timer(_ labelValues: String...) -> Timer {
        assert(kind == .histogram, "\(name) is a \(kind.rawValue)")
        return Timer(label: name, dimensions: labels(labelValues))
    }
}
