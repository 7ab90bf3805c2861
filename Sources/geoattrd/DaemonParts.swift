import GeoAttrCore
import GeoAttrDaemonConfig
import GeoAttrGeocoder
import GeoAttrGPSD
import GeoAttrLinux
import GeoAttrModel
import GeoAttrServer
import GeoAttrSystemd
import GeoIndex
import Logging
import Prometheus
import ServiceLifecycle
import SystemWrites
import GeoAttrSettings

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Everything the daemon runs, made from one configuration: the served attributes, the index in
/// service, the scheduler, the API, the output files and systemd's notifier.
struct DaemonParts {
    let configuration: DaemonConfiguration
    let store: AttributeStore
    let index: GeocoderReloader
    let scheduler: Scheduler
    let server: APIServer
    let outputs: FileOutputs
    let notifier: SystemdNotifier?
    let logger: Logger
    /// What the state file said when the parts were made: the state watcher reports any other.
    let initialPower: PowerState

    /// Opens the index, restores the cached result and binds the API's socket (and the metrics
    /// socket): all three are there before any service runs. Throws when a socket cannot be bound.
    init(configuration: DaemonConfiguration, registry: PrometheusCollectorRegistry, logger: Logger) async throws {
        self.configuration = configuration
        self.logger = logger
        let initialPower = StateFileWatcher.read(
            path: configuration.stateFile, defaultState: configuration.defaultPower, logger: logger)
            ?? configuration.defaultPower
        self.initialPower = initialPower
        let store = AttributeStore(powerState: initialPower)
        let geocoders = GeocoderSlot(nil)
        index = Self.indexReloader(configuration: configuration, slot: geocoders, store: store, logger: logger.component("index"))
        // Missing or invalid: serve the location attributes alone and say so; never refuse to start.
        _ = await index.reload(reason: "start")
        if getenv(IndexLocator.environmentVariable) != nil {
            logger.notice(
                "GEOATTRD_INDEX is geoattrctl's variable and the daemon ignores it: set index.path (GEOATTRD_INDEX_PATH, --index)",
                metadata: ["index": "\(configuration.indexPath)"])
        }
        scheduler = Scheduler(
            configuration: configuration.schedule, fixSource: configuration.fixSource(logger: logger),
            staticSource: configuration.staticSource(), geocoders: geocoders,
            cache: Self.cacheWriter(configuration: configuration, logger: logger), store: store,
            initialPower: initialPower, logger: logger)
        let sockets = ServedSockets.choose(from: ListenFDs.take(), configuration: configuration, logger: logger)
        server = APIServer(
            listening: sockets.api, metricsListening: sockets.metrics,
            store: store.reader, scheduler: scheduler, policy: configuration.accessPolicy(),
            schedule: configuration.schedule, limits: Self.limits(configuration: configuration, logger: logger),
            registry: registry, logger: logger.component("api"))
        outputs = FileOutputs(
            envFile: configuration.envOutput, prometheusFile: configuration.prometheusOutput,
            settings: configuration.outputSettings(), ttl: configuration.schedule.ttl, store: store.reader,
            logger: logger.component("outputs"))
        notifier = SystemdNotifier()
        self.store = store
        try await server.start()
    }

    /// The services of the group. Signals are trapped here, before any service runs, so that none
    /// arriving during start-up takes its default action.
    func services(loader: ConfigurationLoader, logLevel: JournalLogHandler.SharedLevel) async -> [ServiceGroupConfiguration.ServiceConfiguration] {
        let (scheduler, store, notifier) = (scheduler, store, notifier)
        let reload = ConfigurationReload(
            loader: loader, running: configuration,
            target: RunningParts(
                logLevel: logLevel, indexReloader: index, scheduler: scheduler, server: server, outputs: outputs, logger: logger),
            logger: logger)
        let (stateDirectory, logger) = (configuration.stateDirectory, logger)
        let signals = await SignalService.make(scheduler: scheduler, logger: logger) {
            notifier?.reloading()
            let started = ReloadRecord.now()
            switch await reload.reload() {
            case .applied(let pending):
                store.publishReloadRefusal(nil)
                Self.record(.applied, started: started, pending: pending, in: stateDirectory, logger: logger)
            case .refused(let reason):
                store.publishReloadRefusal(reason)
                Self.record(.refused, started: started, reason: reason, in: stateDirectory, logger: logger)
            }
            notifier?.ready(status: SystemdIntegration.statusLine(store.reader))
        }
        // Named only once SIGHUP is trapped: a reload sent to this pid before would kill it.
        Self.record(.started, started: ReloadRecord.now(), in: stateDirectory, logger: logger)
        let stateWatcher = StateFileWatcher(
            path: configuration.stateFile, defaultState: configuration.defaultPower, knownState: self.initialPower,
            logger: logger.component("state")
        ) { state in
            scheduler.setPowerState(state, origin: "state file")
        }
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = [
            .init(service: scheduler),
            .init(service: ListeningAPI(server: server, onListening: announceReady)),
            // Without output files it has nothing to do and returns at once: not a reason to stop.
            .init(service: outputs, successTerminationBehavior: .ignore),
            .init(service: stateWatcher),
            .init(service: signals),
        ]
        if let notifier {
            services.append(.init(service: SystemdIntegration(notifier: notifier, scheduler: scheduler, store: store.reader, logger: logger)))
        }
        // Watched even when missing: the geodata package may be installed after the daemon starts.
        services.append(.init(service: index, successTerminationBehavior: .ignore))
        return services
    }

    /// The answer `geoattrctl reload` waits for. Without it a reload still happens; only its
    /// caller cannot tell, and times out saying so.
    private static func record(
        _ outcome: ReloadRecord.Outcome, started: Int64, reason: String = "", pending: [String] = [], in directory: String, logger: Logger
    ) {
        do {
            try ReloadRecord(pid: getpid(), startedNanoseconds: started, outcome: outcome, reason: reason, restartPending: pending).write(in: directory)
        } catch {
            logger.warning("cannot record the reload's outcome for geoattrctl reload: \(error.description)")
        }
    }

    /// Ready: the socket listens and the persisted cache is loaded (and served).
    private func announceReady() {
        notifier?.ready(status: SystemdIntegration.statusLine(store.reader))
        logger.info(
            "geoattrd started",
            metadata: [
                "state": "\(store.powerState.rawValue)",
                "gpsd": "\(configuration.gpsdEnabled ? configuration.gpsdEndpoint.description : "disabled")",
                "state_file": "\(configuration.stateFile)", "state_dir": "\(configuration.stateDirectory)",
            ])
    }

    private static func indexReloader(
        configuration: DaemonConfiguration, slot: GeocoderSlot, store: AttributeStore, logger: Logger
    ) -> GeocoderReloader {
        GeocoderReloader(
            path: configuration.indexPath, slot: slot, logger: logger,
            publish: { store.publishIndexState($0) }, load: IndexGeocoder.load)
    }

    private static func cacheWriter(configuration: DaemonConfiguration, logger: Logger) -> CacheWriter {
        let cache = CacheFile(directory: configuration.stateDirectory)
        for removed in cache.removeStaleTemporaryFiles() {
            logger.notice("removed a temporary cache file left by an interrupted write", metadata: ["path": "\(removed)"])
        }
        return CacheWriter(store: cache, blockingWork: DedicatedThreadStarter(), logger: logger)
    }

    /// The configured limits, with the connection limit fitted to the descriptors the process may hold.
    private static func limits(configuration: DaemonConfiguration, logger: Logger) -> ServerLimits {
        var limits = configuration.limits
        let descriptors = DescriptorBudget.fit(connections: limits.maximumConnections)
        if let raised = descriptors.raised {
            logger.info("descriptor limit raised for api.max_connections", metadata: ["from": "\(raised.from)", "to": "\(raised.to)"])
        }
        if descriptors.connections < limits.maximumConnections {
            logger.warning(
                "the descriptor limit (\(descriptors.limit)) cannot hold api.max_connections \(limits.maximumConnections): lowered to \(descriptors.connections); more clients get 503 (raise LimitNOFILE=)")
            limits.maximumConnections = descriptors.connections
        }
        return limits
    }
}
