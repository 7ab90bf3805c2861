import GeoIndex
package import GeoAttrCore
package import GeoAttrGPSD
package import GeoAttrModel
package import GeoAttrServer
package import Logging

private typealias Keys = ConfigurationKeys

/// Everything the daemon reads from its configuration, validated.
///
/// Sources, first match wins: command-line flags, then `GEOATTRD_*` environment variables
/// (`fix.max_error_m` is `GEOATTRD_FIX_MAX_ERROR_M`), then the YAML file, then the defaults
/// documented in config/geoattrd.yaml.
package struct DaemonConfiguration: Sendable, Equatable {
    package struct OutputGroup: Sendable, Equatable {
        package var name: String
        package var gid: UInt32
    }

    package struct StaticLocation: Sendable, Equatable {
        package var latitude: Double
        package var longitude: Double
        package var altitudeMeters: Double?
        package var errorMeters: Double?
    }

    package var gpsdEnabled = true
    package var gpsdEndpoint = GPSDEndpoint.default
    package var fixRules = FixAcceptanceRules()
    package var schedule = ScheduleConfiguration()
    package var stateFile = "/run/geoattrd/state"
    package var defaultPower = PowerState.foreground
    package var stateDirectory = "/var/lib/geoattrd"
    package var staticLocation: StaticLocation?
    /// The index file (`index.path`; empty in the file: the installed one). Never looked for
    /// elsewhere: a service must not depend on its working directory.
    package var indexPath = IndexLocator.installedIndex
    package var socketPath = "/run/geoattrd/geoattrd.sock"
    package var socketMode: UInt32 = 0o660
    package var limits = ServerLimits()
    /// A second socket that answers `GET /metrics` alone (`api.metrics_socket`); `nil`: none.
    package var metricsSocket: String?
    package var envOutput: String?
    package var prometheusOutput: String?
    /// What the output files show: positions only when the operator chose so (outputs.level).
    package var outputGrant = Grant(level: .country)
    /// The output files' group (`outputs.group`): its name as written and its gid; `nil`: the
    /// daemon's primary group.
    package var outputGroup: OutputGroup?
    package var outputMode: UInt32 = 0o640
    package var accessDefault = PrecisionLevel.exact
    package var accessRules: [AccessPolicy.Rule] = []
    package var accessMutators: [AccessPolicy.Subject] = []
    package var logLevel = Logger.Level.info

    /// The effective configuration as `key = value` lines, in the order of config/geoattrd.yaml.
    package var effectiveSettings: [(key: String, value: String)] {
        // Whole numbers without a fraction; any other (and any beyond 1e15, which a whole-number
        // conversion would trap on from 2^63: fix.fallback_error_m 1e60 is a valid setting) as is.
        func number(_ value: Double) -> String {
            value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
        }
        func seconds(_ duration: Duration) -> String { number(duration.secondsValue) }
        var settings: [(String, String)] = [
            (Keys.gpsdEnabled.name, "\(gpsdEnabled)"), (Keys.gpsdEndpoint.name, gpsdEndpoint.description),
            (Keys.gpsdFirstReportWait.name, seconds(fixRules.firstReportWait)),
            (Keys.fixTimeout.name, seconds(fixRules.timeout)), (Keys.fixMinimumMode.name, "\(fixRules.minimumMode.rawValue)"),
            (Keys.fixMaximumError.name, number(fixRules.maximumErrorMeters)),
            (Keys.fixFallbackError.name, number(fixRules.timeoutFallbackErrorMeters)),
            (Keys.fixAcceptUnknownError.name, "\(fixRules.acceptUnknownError)"), (Keys.fixRequireTime.name, "\(fixRules.requireTime)"),
            (Keys.fixNoSatelliteTimeout.name, seconds(fixRules.noSatelliteTimeout)),
            (Keys.scheduleTTL.name, seconds(schedule.ttl)), (Keys.scheduleExpireAfter.name, seconds(schedule.expireAfter)),
            (Keys.scheduleRetryInitial.name, seconds(schedule.retryInitial)), (Keys.scheduleRetryMaximum.name, seconds(schedule.retryMaximum)),
            (Keys.refreshBurst.name, "\(schedule.refreshBurst)"), (Keys.refreshInterval.name, seconds(schedule.refreshInterval)),
            (Keys.placesStationaryDistance.name, number(schedule.stationaryDistanceMeters)),
            (Keys.stateFile.name, stateFile), (Keys.stateDefault.name, defaultPower.rawValue), (Keys.stateDirectory.name, stateDirectory),
        ]
        if let location = staticLocation {
            settings.append((Keys.staticLatitude.name, "\(location.latitude)"))
            settings.append((Keys.staticLongitude.name, "\(location.longitude)"))
            if let altitude = location.altitudeMeters { settings.append((Keys.staticAltitude.name, "\(altitude)")) }
            if let error = location.errorMeters { settings.append((Keys.staticError.name, "\(error)")) }
        }
        // A typed constant of its own: as one `+=` literal, Swift 6.2's type checker (the arm64
        // package's compiler) gives up on it.
        let rest: [(String, String)] = [
            (Keys.indexPath.name, indexPath), (Keys.socketPath.name, socketPath),
            (Keys.socketMode.name, "0" + String(socketMode, radix: 8)),
            (Keys.apiHeadTimeout.name, seconds(limits.headTimeout)), (Keys.apiIdleTimeout.name, seconds(limits.idleTimeout)),
            (Keys.apiHeartbeat.name, seconds(limits.heartbeatInterval)), (Keys.apiMaximumConnections.name, "\(limits.maximumConnections)"),
            (Keys.apiMaximumConnectionsPerUID.name, "\(limits.maximumConnectionsPerUID)"),
            (Keys.apiMetricsSocket.name, metricsSocket ?? ""),
            (Keys.outputsEnvFile.name, envOutput ?? ""), (Keys.outputsPrometheusFile.name, prometheusOutput ?? ""),
            (Keys.outputsLevel.name, outputGrant.level.rawValue),
            (Keys.outputsDecimals.name, outputGrant.coordinateDecimals.map { "\($0)" } ?? ""),
            (Keys.outputsGroup.name, outputGroup.map { "\($0.name) (gid \($0.gid))" } ?? ""),
            (Keys.outputsMode.name, "0" + String(outputMode, radix: 8)),
            (Keys.accessDefaultLevel.name, accessDefault.rawValue),
            (Keys.accessRules.name, "[" + accessRules.map(\.description).joined(separator: ", ") + "]"),
            (Keys.accessMutate.name, "[" + accessMutators.map(\.description).joined(separator: ", ") + "]"),
            (Keys.logLevel.name, logLevel.rawValue),
        ]
        settings += rest
        return settings
    }

    /// The keys whose effective value differs from `old`'s, among those applied as `applied`.
    package func changedKeys(from old: DaemonConfiguration, applied: ConfigurationKey.Applied) -> [String] {
        let before = Dictionary(old.effectiveSettings.map { ($0.key, $0.value) }, uniquingKeysWith: { first, _ in first })
        let after = Dictionary(effectiveSettings.map { ($0.key, $0.value) }, uniquingKeysWith: { first, _ in first })
        return ConfigurationKeys.all.filter { $0.applied == applied && before[$0.name] != after[$0.name] }.map(\.name)
    }

    /// The default configuration file, read when present.
    package static let defaultFile = "/etc/geoattrd/geoattrd.yaml"
    package static let environmentPrefix = "GEOATTRD_"
}
