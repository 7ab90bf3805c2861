package import Logging
import Synchronization

/// The running daemon's parts that a reload reconfigures.
package protocol ReloadTarget: Sendable {
    /// Applies a configuration that loaded and validated.
    func apply(_ configuration: DaemonConfiguration) async
}

/// SIGHUP: reads the configuration again and applies it, or refuses it whole and keeps the
/// running one. Keys that only a restart applies are named in a warning each, not applied.
package final class ConfigurationReload: Sendable {
    package enum Outcome: Sendable, Equatable {
        /// Applied; these keys changed but wait for the next restart.
        case applied(restartPending: [String])
        /// Refused, with the one-line reason; nothing changed.
        case refused(String)
    }

    private let loader: ConfigurationLoader
    private let running: Mutex<DaemonConfiguration>
    private let target: any ReloadTarget
    private let logger: Logger

    package init(loader: ConfigurationLoader, running configuration: DaemonConfiguration, target: any ReloadTarget, logger: Logger) {
        self.loader = loader
        self.running = Mutex(configuration)
        self.target = target
        self.logger = logger
    }

    /// The configuration in force.
    package var current: DaemonConfiguration { running.withLock { $0 } }

    package func reload() async -> Outcome {
        let new: DaemonConfiguration
        do {
            new = try await loader.load()
        } catch {
            logger.error("reload refused, keeping the running configuration: \(error)")
            return .refused("\(error)")
        }
        let pending = new.changedKeys(from: current, applied: .restart)
        for name in pending {
            logger.warning("\(name) changed: takes effect at the next restart")
        }
        await target.apply(new)
        running.withLock { $0 = new }
        logger.info("configuration reloaded")
        return .applied(restartPending: pending)
    }
}
