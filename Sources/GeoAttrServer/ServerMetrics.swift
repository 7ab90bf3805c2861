import CoreMetrics
import GeoAttrCore
import Synchronization

/// The API's metrics, through the swift-metrics API (the executable bootstraps Prometheus).
/// None of them carries location data, so `/metrics` is safe for every precision level.
final class ServerMetrics: Sendable {
    let connectedClients = MetricCatalogue.connectedClients.gauge()
    /// Counters by endpoint and status, made once: a lookup is far cheaper than a factory call
    /// on every request.
    private let requests = Mutex<[RequestKey: Counter]>([:])

    private struct RequestKey: Hashable {
        var endpoint: String
        var status: Int
    }

    func request(endpoint: String, status: Int) {
        counter(endpoint: endpoint, status: status).increment()
    }

    /// The counter for one endpoint and status (connections keep the last one they used).
    func counter(endpoint: String, status: Int) -> Counter {
        let key = RequestKey(endpoint: endpoint, status: status)
        return requests.withLock { counters in
            if let counter = counters[key] { return counter }
            let counter = MetricCatalogue.requests.counter(endpoint, String(status))
            counters[key] = counter
            return counter
        }
    }
}
