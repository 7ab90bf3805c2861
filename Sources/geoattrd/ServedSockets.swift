import GeoAttrDaemonConfig
import GeoAttrServer
import GeoAttrSystemd
import Logging

/// The sockets the daemon serves: the API's, and the metrics socket when there is one. Each is
/// the one systemd passed for it (socket activation, told apart by FileDescriptorName=: the
/// sockets exist before the daemon starts, so clients never race it), else bound by the daemon
/// at its configured path.
struct ServedSockets {
    var api: APIServer.Listening
    /// `nil`: neither passed by systemd nor configured (`api.metrics_socket`).
    var metrics: APIServer.Listening?

    /// geoattrd-metrics.socket's FileDescriptorName=, and the unit's name, which systemd gives a
    /// socket without one.
    static let metricsNames: Set<String> = ["metrics", "geoattrd-metrics.socket"]
    static let apiNames: Set<String> = ["api", "geoattrd.socket"]
    /// A socket the daemon binds at `api.metrics_socket`: open to every local user, as
    /// geoattrd-metrics.socket's is. It answers /metrics alone, which any client of the API may
    /// read at any access level and which carries no location data.
    static let metricsSocketMode: UInt32 = 0o666

    static func choose(from passed: [ListenFDs.Passed], configuration: DaemonConfiguration, logger: Logger) -> ServedSockets {
        let isMetrics = { (socket: ListenFDs.Passed) in socket.name.map { metricsNames.contains($0) } ?? false }
        // A socket without a name, or with one the daemon does not know, is taken for the API's
        // (systemd-socket-activate, an older unit); the metrics socket never is.
        let api = passed.first { $0.name.map { apiNames.contains($0) } ?? true } ?? passed.first { !isMetrics($0) }
        let metrics = passed.first(where: isMetrics)
        if let api {
            logger.info("using the socket passed by systemd", metadata: ["fd": "\(api.fd)", "name": "\(api.name ?? "-")"])
        }
        if let metrics {
            logger.info("using the metrics socket passed by systemd", metadata: ["fd": "\(metrics.fd)", "name": "\(metrics.name ?? "-")"])
        }
        return ServedSockets(
            api: api.map { .descriptor($0.fd) } ?? .path(configuration.socketPath, mode: configuration.socketMode),
            metrics: metrics.map { .descriptor($0.fd) } ?? configuration.metricsSocket.map { .path($0, mode: metricsSocketMode) })
    }
}
