package import Configuration
import GeoAttrCore
import GeoAttrLinux
import GeoAttrModel
import GeoAttrSettings
import GeoIndex
import Logging

/// One configuration key, declared once (in `ConfigurationKey+Declarations.swift`): its name in
/// the file, its type, its geoattrd flag if it has one, whether a reload applies it, how it is
/// read and checked into `DaemonConfiguration`, and how `--check-config` prints its value. Its
/// default is what `DaemonConfiguration()` holds; its environment variable follows from the name.
/// The loader, the effective settings, the reload's restart warnings, the flags' test and the
/// generated reference all go through this type.
package enum ConfigurationKey: String, CaseIterable, Sendable, Hashable {
    case gpsdEnabled = "gpsd.enabled"
    case gpsdEndpoint = "gpsd.endpoint"
    case gpsdFirstReportWait = "gpsd.first_report_wait_s"
    case fixTimeout = "fix.timeout_s"
    case fixMinimumMode = "fix.min_mode"
    case fixMaximumError = "fix.max_error_m"
    case fixFallbackError = "fix.fallback_error_m"
    case fixAcceptUnknownError = "fix.accept_unknown_error"
    case fixRequireTime = "fix.require_time"
    case fixNoSatelliteTimeout = "fix.no_satellite_timeout_s"
    case scheduleTTL = "schedule.ttl_s"
    case scheduleExpireAfter = "schedule.expire_after_s"
    case scheduleRetryInitial = "schedule.retry_initial_s"
    case scheduleRetryMaximum = "schedule.retry_max_s"
    case refreshBurst = "refresh.burst"
    case refreshInterval = "refresh.interval_s"
    case placesStationaryDistance = "places.stationary_distance_m"
    case stateFile = "state.file"
    case stateDefault = "state.default"
    case stateDirectory = "state.dir"
    case staticLatitude = "static.latitude"
    case staticLongitude = "static.longitude"
    case staticAltitude = "static.altitude_m"
    case staticError = "static.error_m"
    case indexPath = "index.path"
    case socketPath = "socket.path"
    case socketMode = "socket.mode"
    case apiHeadTimeout = "api.head_timeout_s"
    case apiIdleTimeout = "api.idle_timeout_s"
    case apiHeartbeat = "api.heartbeat_s"
    case apiMaximumConnections = "api.max_connections"
    case apiMaximumConnectionsPerUID = "api.max_connections_per_uid"
    case apiMetricsSocket = "api.metrics_socket"
    case outputsEnvFile = "outputs.env_file"
    case outputsPrometheusFile = "outputs.prometheus_file"
    case outputsLevel = "outputs.level"
    case outputsDecimals = "outputs.decimals"
    case outputsGroup = "outputs.group"
    case outputsMode = "outputs.mode"
    case accessDefaultLevel = "access.default_level"
    case accessRules = "access.rules"
    case accessMutate = "access.mutate"
    case logLevel = "log.level"

    /// Each key's declaration. The cross-key rules (a fallback bound above the strict one, both
    /// static coordinates, ...) are `ConfigurationChecks`, run once every key is read.
    private var declaration: KeyDeclaration {
        switch self {
        case .gpsdEnabled: .bool(\.gpsdEnabled, .reload)
        case .gpsdEndpoint:
            .checked(
                .string, \.gpsdEndpoint, flag: "gpsd", .reload, read: { $0.string(forKey: $1, default: $2.description) },
                convert: GPSDEndpoint.init(parsing:), problem: { "expected HOST:PORT, for example 127.0.0.1:2947; got '\($0)'" },
                effective: \.description)
        case .gpsdFirstReportWait:
            .seconds(\.fixRules.firstReportWait, minimum: 0, maximum: 60, problem: "expected 0 to 60 seconds (0: no wait)", .reload)
        case .fixTimeout: .seconds(\.fixRules.timeout, minimum: 0.1, .reload)
        case .fixMinimumMode:
            .checked(
                .int, \.fixRules.minimumMode, .reload, read: { $0.int(forKey: $1, default: $2.rawValue) },
                convert: FixMode.init(rawValue:), problem: { "expected 2 or 3; got \($0)" }, effective: { "\($0.rawValue)" })
        case .fixMaximumError: .positive(\.fixRules.maximumErrorMeters, .reload)
        case .fixFallbackError: .positive(\.fixRules.timeoutFallbackErrorMeters, .reload)
        case .fixAcceptUnknownError: .bool(\.fixRules.acceptUnknownError, .reload)
        case .fixRequireTime: .bool(\.fixRules.requireTime, .reload)
        case .fixNoSatelliteTimeout: .seconds(\.fixRules.noSatelliteTimeout, minimum: 0.1, .reload)
        case .scheduleTTL: .seconds(\.schedule.ttl, minimum: 0.1, .reload)
        case .scheduleExpireAfter: .seconds(\.schedule.expireAfter, minimum: 0.1, .reload)
        case .scheduleRetryInitial: .seconds(\.schedule.retryInitial, minimum: 0.1, .reload)
        case .scheduleRetryMaximum: .seconds(\.schedule.retryMaximum, minimum: 0.1, .reload)
        case .refreshBurst: .int(\.schedule.refreshBurst, 0...10_000, .reload)
        case .refreshInterval: .seconds(\.schedule.refreshInterval, minimum: 0.001, .reload)
        case .placesStationaryDistance:
            .number(\.schedule.stationaryDistanceMeters, expected: "0 or more metres", .reload) { $0 >= 0 }
        case .stateFile: .path(\.stateFile, flag: "state-file", .restart)
        case .stateDefault: .choice(\.defaultPower, expected: "foreground or background", .restart)
        case .stateDirectory: .path(\.stateDirectory, flag: "state-dir", .restart)
        case .staticLatitude: .staticCoordinate(\.staticLatitude)
        case .staticLongitude: .staticCoordinate(\.staticLongitude)
        case .staticAltitude: .staticCoordinate(\.staticAltitude)
        case .staticError: .staticCoordinate(\.staticError)
        case .indexPath:
            // Empty in the file: the installed index.
            .optionalPath(
                \.indexPath, flag: "index", .restart, empty: IndexLocator.installedIndex, wrap: { $0 }, unwrap: { $0 })
        case .socketPath: .path(\.socketPath, flag: "socket", .restart)
        case .socketMode: .octalMode(\.socketMode, example: "0660", .restart)
        case .apiHeadTimeout: .seconds(\.limits.headTimeout, minimum: 0.05, .restart)
        case .apiIdleTimeout: .seconds(\.limits.idleTimeout, minimum: 0.05, .restart)
        case .apiHeartbeat: .seconds(\.limits.heartbeatInterval, minimum: 0.05, .restart)
        case .apiMaximumConnections: .int(\.limits.maximumConnections, 1...100_000, .restart)
        case .apiMaximumConnectionsPerUID: .int(\.limits.maximumConnectionsPerUID, 1...100_000, .restart)
        case .apiMetricsSocket: .optionalPath(\.metricsSocket, .restart)
        case .outputsEnvFile: .optionalPath(\.envOutput, .restart)
        case .outputsPrometheusFile: .optionalPath(\.prometheusOutput, .restart)
        case .outputsLevel: .choice(\.outputGrant.level, expected: KeyDeclaration.levelNames, .reload)
        case .outputsDecimals:
            .custom(
                .int, .reload,
                read: { reader, key, configuration in
                    guard let decimals = reader.int(forKey: key.configKey) else { return }
                    guard (0...9).contains(decimals) else {
                        throw ConfigurationError(key: key.name, problem: "expected 0 to 9; got \(decimals)")
                    }
                    configuration.outputGrant.coordinateDecimals = decimals
                },
                effective: { $0.outputGrant.coordinateDecimals.map { "\($0)" } ?? "" })
        case .outputsGroup:
            .custom(
                .string, .reload,
                read: { reader, key, configuration in
                    guard let group = reader.string(forKey: key.configKey), !group.isEmpty else { return }
                    guard let gid = AccountNames.gid(named: group) else {
                        throw ConfigurationError(key: key.name, problem: "no such group: '\(group)' (a group name or number)")
                    }
                    configuration.outputGroup = DaemonConfiguration.OutputGroup(name: group, gid: gid)
                },
                effective: { $0.outputGroup.map { "\($0.name) (gid \($0.gid))" } ?? "" })
        case .outputsMode: .octalMode(\.outputMode, example: "0640", .reload)
        case .accessDefaultLevel: .choice(\.accessDefault, expected: KeyDeclaration.levelNames, .reload)
        case .accessRules:
            .list(\.accessRules, .reload, parse: { try AccessPolicy.parseRule($0) }, problem: { _, error in "\(error)" })
        case .accessMutate:
            .list(\.accessMutators, .reload, parse: { try AccessPolicy.parseSubject($0) }, problem: { text, _ in "'\(text)': expected uid:N or gid:N" })
        case .logLevel:
            .choice(\.logLevel, flag: "log-level", expected: "trace, debug, info, notice, warning, error or critical", .reload)
        }
    }

    package enum Applied: Sendable, Hashable {
        /// SIGHUP applies it to the running daemon.
        case reload
        /// Read at start; a reload that changes it says it waits for the next restart.
        case restart
    }

    package var name: String { rawValue }
    package var type: ConfigType { declaration.type }
    /// geoattrd's long flag (`--socket`), if the key has one.
    package var flag: String? { declaration.flag }
    package var applied: Applied { declaration.applied }

    /// The default, as `--check-config` prints it ("" for none).
    package var defaultValue: String { effectiveValue(in: DaemonConfiguration()) ?? "" }

    /// The value in `configuration` as `--check-config` prints it; `nil`: not set, not printed.
    package func effectiveValue(in configuration: DaemonConfiguration) -> String? {
        declaration.effective(configuration)
    }

    /// Reads the key from the sources into `configuration`, whose value stands as the default.
    func read(_ reader: ConfigReader, into configuration: inout DaemonConfiguration) throws {
        try declaration.read(reader, self, &configuration)
    }

    /// `GEOATTRD_` + the name in upper case with dots as underscores.
    package var environmentVariable: String {
        DaemonConfiguration.environmentPrefix + String(name.uppercased().map { $0 == "." ? "_" : $0 })
    }

    package var components: [String] { name.split(separator: ".").map(String.init) }
    package var configKey: ConfigKey { ConfigKey(components) }
}
