import CoreMetrics

/// The API's metrics, through the swift-metrics API (the executable bootstraps Prometheus).
/// None of them carries location data, so `/metrics` is safe for every precision level.
struct ServerMetrics: Sendable {
    let connectedClients = Gauge(label: "geoattrd_connected_clients")

    func request(endpoint: String, status: Int) {
        Counter(label: "geoattrd_requests_total", dimensions: [("endpoint", endpoint), ("status", String(status))]).increment()
    }
}
