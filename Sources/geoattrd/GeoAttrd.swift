import ArgumentParser
import GeoAttrDaemonConfig
import GeoAttrLinux
import GeoAttrModel
import GeoAttrServer
import GeoIndex
import GeoAttrSystemd
import Logging
import Metrics
import Prometheus

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

struct GeoAttrd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "geoattrd",
        abstract: "Serve OpenTelemetry geo.* attributes from one-shot gpsd fixes, reverse-geocoded offline.",
        discussion: """
            Configuration: these flags, then GEOATTRD_* environment variables (the key in upper case, \
            dots as underscores: GEOATTRD_SCHEDULE_TTL_S), then the YAML file, then the defaults. \
            Every key is documented in geoattrd.yaml(5) and in the shipped /etc/geoattrd/geoattrd.yaml. \
            A relative path given in these flags is taken against the working directory; in the \
            environment and the file, paths must be absolute. A list in a variable is its items \
            separated by commas: GEOATTRD_ACCESS_RULES=uid:1001=country,gid:20=region.

            Signals: SIGUSR1 forces a fix (within the refresh budget), SIGHUP reloads the \
            configuration (an invalid one is refused and the running one kept; `geoattrctl \
            reload` sends it and waits for the answer), SIGTSTP means \
            background, SIGCONT foreground, SIGTERM/SIGINT stop gracefully.

            Exit codes: 0 stopped cleanly; 64 invalid arguments; 70 no arguments reached the program, \
            not even its name; 78 invalid configuration (one line on stderr names the key); 1 any other \
            failure.
            """,
        version: "\(ProductVersion.number) (index format \(IndexFormat.version))"
    )

    @Option(help: "The YAML configuration file (default /etc/geoattrd/geoattrd.yaml, read if present).")
    var config: String?

    @Option(help: "The API socket path (socket.path).")
    var socket: String?

    @Option(help: "gpsd address as HOST:PORT (gpsd.endpoint).")
    var gpsd: String?

    @Option(name: .customLong("state-file"), help: "The foreground/background state file (state.file).")
    var stateFile: String?

    @Option(name: .customLong("state-dir"), help: "Where the cache is kept (state.dir).")
    var stateDir: String?

    @Option(help: "The geocoder index file (index.path; default /usr/share/geoattrd/world.gidx).")
    var index: String?

    @Option(
        name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical (log.level).",
        completion: .list(["trace", "debug", "info", "notice", "warning", "error", "critical"]))
    var logLevel: String?

    @Flag(name: .customLong("check-config"), help: "Validate the configuration, print the effective settings and exit (0 valid, 78 invalid).")
    var checkConfig = false

    func run() async throws {
        signal(SIGPIPE, SIG_IGN)
        // Each flag's key (ConfigurationKey.flag); a test holds --help to the table. Paths are
        // taken against the working directory once, here, so that a reload reads the same files.
        let path = { (given: String?) in given.map(WorkingDirectory.resolve) }
        let given: [(ConfigurationKey, String?)] = [
            (ConfigurationKey.socketPath, path(socket)), (ConfigurationKey.gpsdEndpoint, gpsd),
            (ConfigurationKey.stateFile, path(stateFile)), (ConfigurationKey.stateDirectory, path(stateDir)),
            (ConfigurationKey.indexPath, path(index)), (ConfigurationKey.logLevel, logLevel),
        ]
        var flags: [String: String] = [:]
        for case (let key, let value?) in given { flags[key.name] = value }
        let loader = ConfigurationLoader(
            flags: flags,
            environment: ProcessEnvironment.current(),
            filePath: path(config) ?? DaemonConfiguration.defaultFile,
            explicit: config != nil
        )
        let configuration: DaemonConfiguration
        do {
            configuration = try await loader.load()
        } catch {
            writeError("geoattrd: \(error)")
            throw ExitCode(78)
        }
        if checkConfig {
            let lines = configuration.effectiveSettings.map { "\($0.key) = \($0.value)" }.joined(separator: "\n")
            let bytes = Array((lines + "\n").utf8)
            _ = bytes.withUnsafeBytes { write(STDOUT_FILENO, $0.baseAddress, $0.count) }
            return
        }
        let level = JournalLogHandler.SharedLevel(configuration.logLevel)
        LoggingSystem.bootstrap { label in JournalLogHandler(label: label, level: level) }
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(DescribedMetricsFactory(registry: registry))
        MetricFamilies.registerAtZero(in: registry)
        let logger = Logger(label: "geoattrd")
        do {
            try await Daemon(configuration: configuration, loader: loader, logLevel: level, registry: registry, logger: logger).run()
        } catch {
            logger.critical("geoattrd failed: \(error)")
            throw ExitCode(1)
        }
    }

    private func writeError(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        _ = bytes.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
    }
}

enum ProcessEnvironment {
    static func current() -> [String: String] {
        var result: [String: String] = [:]
        var pointer = environ
        while let entry = pointer.pointee {
            let text = String(cString: entry)
            if let equals = text.firstIndex(of: "=") {
                result[String(text[..<equals])] = String(text[text.index(after: equals)...])
            }
            pointer += 1
        }
        return result
    }
}
