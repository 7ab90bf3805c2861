import GeoAttrCore
import GeoAttrDaemonConfig
import GeoAttrSystemd
import Logging
import Prometheus
import ServiceLifecycle
import UnixSignals

/// The daemon: its parts, assembled from a validated configuration, run as one ServiceGroup.
struct Daemon {
    let configuration: DaemonConfiguration
    let loader: ConfigurationLoader
    let logLevel: JournalLogHandler.SharedLevel
    let registry: PrometheusCollectorRegistry
    let logger: Logger

    func run() async throws {
        let parts = try await DaemonParts(configuration: configuration, registry: registry, logger: logger)
        let services = await parts.services(loader: loader, logLevel: logLevel)
        var groupConfiguration = ServiceGroupConfiguration(
            services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        groupConfiguration.maximumGracefulShutdownDuration = .seconds(10)
        try await ServiceGroup(configuration: groupConfiguration).run()
        parts.store.finish()
        logger.info("geoattrd stopped")
    }
}
