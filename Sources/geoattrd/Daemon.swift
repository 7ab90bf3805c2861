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
import Synchronization
import UnixSignals

#if canImport(Glibc)
import Glibc
#endif

/// Assembles the daemon from a validated configuration: one ServiceGroup.
struct Daemon {
    let configuration: DaemonConfiguration
    let loader: ConfigurationLoader
    let logLevel: JournalLogHandler.SharedLevel
    let registry: PrometheusCollectorRegistry
    let logger: Logger

    func run() async throws {
        let initialPower = StateFileWatcher.read(
            path: configuration.stateFile, defaultState: configuration.defaultPower, logger: logger)
            ?? configuration.defaultPower
        let store = AttributeStore(powerState: initialPower)
        let geocoders = GeocoderSlot(nil)
        let indexPath = configuration.indexPath
        let reloader = GeocoderReloader(
            path: indexPath, slot: geocoders, logger: Logger(label: "geoattrd.index"),
            onSwap: { geocoder in
                store.updateStatus { status in
                    status.indexVersion = geocoder?.indexVersion
                    status.indexProblem = nil
                    status.degraded.removeAll { $0.hasPrefix("no geocoder index") }
                }
            },
            onRefusal: { problem in store.updateStatus { $0.indexProblem = problem } },
            load: IndexGeocoder.load)
        // Missing or invalid: serve the location attributes alone and say so; never refuse to start.
        _ = await reloader.reload(reason: "start")
        if getenv(IndexLocator.environmentVariable) != nil {
            logger.notice(
                "GEOATTRD_INDEX is geoattrctl's variable and the daemon ignores it: set index.path (GEOATTRD_INDEX_PATH, --index)",
                metadata: ["index": "\(indexPath)"])
        }
        let cache = CacheFile(directory: configuration.stateDirectory)
        for removed in cache.removeStaleTemporaryFiles() {
            logger.notice("removed a temporary cache file left by an interrupted write", metadata: ["path": "\(removed)"])
        }
        let scheduler = Scheduler(
            configuration: configuration.schedule,
            fixSource: Self.fixSource(for: configuration),
            staticSource: Self.staticSource(for: configuration),
            geocoders: geocoders,
            cache: CacheWriter(store: cache, blockingWork: DedicatedThreadStarter(), logger: Logger(label: "geoattrd")),
            store: store,
            initialPower: initialPower,
            logger: Logger(label: "geoattrd")
        )
        let notifier = SystemdNotifier()
        // Socket activation: systemd holds the socket (it exists before the daemon starts, so
        // sidecars never race it); otherwise the daemon binds its own.
        let passed = ListenFDs.take()
        let listening: APIServer.Listening
        if let socket = passed.first(where: { $0.name == nil || $0.name == "api" || $0.name == "geoattrd.socket" }) ?? passed.first {
            listening = .descriptor(socket.fd)
            logger.info("using the socket passed by systemd", metadata: ["fd": "\(socket.fd)", "name": "\(socket.name ?? "-")"])
        } else {
            listening = .path(configuration.socketPath, mode: configuration.socketMode)
        }
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
        let server = APIServer(
            listening: listening,
            store: store, scheduler: scheduler, policy: Self.policy(for: configuration),
            schedule: configuration.schedule, limits: limits, registry: registry,
            logger: Logger(label: "geoattrd.api"))
        // Clients can connect once this returns: bind before the services run.
        try await server.start()
        let outputs = FileOutputs(
            envFile: configuration.envOutput, prometheusFile: configuration.prometheusOutput,
            settings: Self.outputSettings(for: configuration), ttl: configuration.schedule.ttl, store: store,
            logger: Logger(label: "geoattrd.outputs"))
        let reload = ConfigurationReload(
            loader: loader, running: configuration,
            target: RunningParts(
                logLevel: logLevel, indexReloader: reloader, scheduler: scheduler, server: server, outputs: outputs),
            logger: logger)
        let signals = await SignalService.make(scheduler: scheduler, logger: logger) {
            notifier?.reloading()
            _ = await reload.reload()
            notifier?.ready(status: SystemdIntegration.statusLine(store))
        }
        let stateWatcher = StateFileWatcher(
            path: configuration.stateFile, defaultState: configuration.defaultPower,
            logger: Logger(label: "geoattrd.state")
        ) { state in
            scheduler.setPowerState(state, origin: "state file")
        }

        var services: [ServiceGroupConfiguration.ServiceConfiguration] = [
            .init(service: scheduler),
            .init(service: server),
            // Without output files it has nothing to do and returns at once: not a reason to stop.
            .init(service: outputs, successTerminationBehavior: .ignore),
            .init(service: stateWatcher),
            .init(service: signals),
        ]
        if let notifier {
            services.append(.init(service: SystemdIntegration(notifier: notifier, scheduler: scheduler, store: store, logger: logger)))
        }
        // Watched even when missing: the geodata package may be installed after the daemon starts.
        services.append(.init(service: reloader, successTerminationBehavior: .ignore))
        var groupConfiguration = ServiceGroupConfiguration(
            services: services,
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger
        )
        groupConfiguration.maximumGracefulShutdownDuration = .seconds(10)
        let group = ServiceGroup(configuration: groupConfiguration)
        // Ready: the socket listens and the persisted cache is loaded (and served).
        notifier?.ready(status: SystemdIntegration.statusLine(store))
        logger.info(
            "geoattrd started",
            metadata: [
                "state": "\(initialPower.rawValue)", "gpsd": "\(configuration.gpsdEnabled ? configuration.gpsdEndpoint.description : "disabled")",
                "state_file": "\(configuration.stateFile)", "state_dir": "\(configuration.stateDirectory)",
            ])
        try await group.run()
        store.finish()
        logger.info("geoattrd stopped")
    }

    static func outputSettings(for configuration: DaemonConfiguration) -> FileOutputs.Settings {
        FileOutputs.Settings(grant: configuration.outputGrant, group: configuration.outputGroup?.gid, mode: configuration.outputMode)
    }

    static func policy(for configuration: DaemonConfiguration) -> AccessPolicy {
        AccessPolicy(
            rules: configuration.accessRules, defaultGrant: Grant(level: configuration.accessDefault),
            mutators: configuration.accessMutators, daemonUID: getuid())
    }

    static func fixSource(for configuration: DaemonConfiguration) -> any FixSource {
        if configuration.gpsdEnabled {
            return GPSDFixSource(endpoint: configuration.gpsdEndpoint, rules: configuration.fixRules, logger: Logger(label: "geoattrd.gpsd"))
        }
        return staticSource(for: configuration) ?? GPSDFixSource(endpoint: configuration.gpsdEndpoint)
    }

    static func staticSource(for configuration: DaemonConfiguration) -> StaticFixSource? {
        guard let location = configuration.staticLocation else { return nil }
        return try? StaticFixSource(
            latitude: location.latitude, longitude: location.longitude,
            altitudeMeters: location.altitudeMeters, horizontalErrorMeters: location.errorMeters)
    }
}

/// What a reload reconfigures in the running daemon, in this order: the log level, the index
/// (read again), the schedule and fix source, the static location, the API's access policy and
/// schedule, the output files.
struct RunningParts: ReloadTarget {
    let logLevel: JournalLogHandler.SharedLevel
    let indexReloader: GeocoderReloader
    let scheduler: Scheduler
    let server: APIServer
    let outputs: FileOutputs

    func apply(_ configuration: DaemonConfiguration) async {
        logLevel.value = configuration.logLevel
        await indexReloader.reload(reason: "SIGHUP")
        scheduler.reconfigure(configuration.schedule, fixSource: Daemon.fixSource(for: configuration))
        scheduler.setStaticLocation(Daemon.staticSource(for: configuration))
        server.update(policy: Daemon.policy(for: configuration), schedule: configuration.schedule)
        outputs.update(Daemon.outputSettings(for: configuration))
    }
}
