import Configuration
import FoundationEssentials
import GeoIndex
package import GeoAttrCore
package import GeoAttrGPSD
package import GeoAttrModel
package import GeoAttrServer
package import Logging
import Synchronization

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
    package var envOutput: String?
    package var prometheusOutput: String?
    package var outputGrant = Grant(level: .exact)
    /// The output files' group (`outputs.group`): its name as written and its gid; `nil`: the
    /// daemon's primary group.
    package var outputGroup: OutputGroup?
    package var outputMode: UInt32 = 0o644
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
        settings += [
            (Keys.indexPath.name, indexPath), (Keys.socketPath.name, socketPath),
            (Keys.socketMode.name, "0" + String(socketMode, radix: 8)),
            (Keys.apiHeadTimeout.name, seconds(limits.headTimeout)), (Keys.apiIdleTimeout.name, seconds(limits.idleTimeout)),
            (Keys.apiHeartbeat.name, seconds(limits.heartbeatInterval)), (Keys.apiMaximumConnections.name, "\(limits.maximumConnections)"),
            (Keys.apiMaximumConnectionsPerUID.name, "\(limits.maximumConnectionsPerUID)"),
            (Keys.outputsEnvFile.name, envOutput ?? ""), (Keys.outputsPrometheusFile.name, prometheusOutput ?? ""),
            (Keys.outputsLevel.name, outputGrant.level.rawValue),
            (Keys.outputsDecimals.name, outputGrant.coordinateDecimals.map { "\($0)" } ?? ""),
            (Keys.outputsGroup.name, outputGroup.map { "\($0.name) (gid \($0.gid))" } ?? ""),
            (Keys.outputsMode.name, "0" + String(outputMode, radix: 8)),
            (Keys.accessDefaultLevel.name, accessDefault.rawValue),
            (Keys.accessRules.name, "[" + accessRules.map { rule in
                "\(rule.subject)=\(rule.grant.level.rawValue)" + (rule.grant.coordinateDecimals.map { "/\($0)" } ?? "")
            }.joined(separator: ", ") + "]"),
            (Keys.accessMutate.name, "[" + accessMutators.map(\.description).joined(separator: ", ") + "]"),
            (Keys.logLevel.name, logLevel.rawValue),
        ]
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

/// A configuration that cannot be used, with the key to fix.
package struct ConfigurationError: Error, CustomStringConvertible {
    package var key: String
    package var problem: String

    /// One line, whatever the parser said.
    package var description: String {
        let flat = problem.split(whereSeparator: \.isNewline).map { $0.trimmingWhitespace() }.filter { !$0.isEmpty }
        return "invalid configuration: \(key): \(flat.joined(separator: " | "))"
    }
}

/// Reads and validates the configuration from flags, environment and file.
package struct ConfigurationLoader: Sendable {
    /// Flag values by configuration key (`gpsd.endpoint`, ...).
    package var flags: [String: String]
    package var environment: [String: String]
    /// The YAML file; `explicit` when the user named it (then it must exist).
    package var filePath: String
    package var explicit: Bool

    package init(flags: [String: String], environment: [String: String], filePath: String, explicit: Bool) {
        self.flags = flags
        self.environment = environment
        self.filePath = filePath
        self.explicit = explicit
    }

    package func load() async throws -> DaemonConfiguration {
        let fileProvider = try ConfigurationFile.provider(path: filePath, explicit: explicit)
        var values: [AbsoluteConfigKey: ConfigValue] = [:]
        for (key, value) in flags {
            values[AbsoluteConfigKey(stringLiteral: key)] = ConfigValue(.string(value), isSecret: false)
        }
        var prefixed: [String: String] = [:]
        let known = Set(ConfigurationKeys.all.map(\.environmentVariable))
        for (name, value) in environment where name.hasPrefix(DaemonConfiguration.environmentPrefix) {
            if ConfigurationKeys.otherVariables.contains(name) { continue }
            guard known.contains(name) else {
                throw ConfigurationKeys.unknown(Self.keyName(ofVariable: name), as: name)
            }
            prefixed[String(name.dropFirst(DaemonConfiguration.environmentPrefix.count))] = value
        }
        let reporter = FailureRecorder()
        let reader = ConfigReader(
            providers: [
                InMemoryProvider(name: "command line", values: values),
                EnvironmentVariablesProvider(environmentVariables: prefixed),
                fileProvider,
            ],
            accessReporter: reporter
        )
        let configuration = try read(reader)
        if let failure = reporter.first {
            throw ConfigurationError(key: failure.key, problem: failure.problem)
        }
        return configuration
    }

    /// `GEOATTRD_ACCESS_DEFAULT_LEVL` → `access.default_levl`, for the suggestion only.
    static func keyName(ofVariable name: String) -> String {
        let rest = name.dropFirst(DaemonConfiguration.environmentPrefix.count).lowercased()
        // The section is the first word; the rest keeps its underscores, as the keys do.
        guard let underscore = rest.firstIndex(of: "_") else { return rest }
        return rest[..<underscore] + "." + rest[rest.index(after: underscore)...]
    }

    private func read(_ config: ConfigReader) throws -> DaemonConfiguration {
        var result = DaemonConfiguration()
        let defaults = DaemonConfiguration()

        result.gpsdEnabled = config.bool(forKey: Keys.gpsdEnabled.configKey, default: defaults.gpsdEnabled)
        let endpoint = config.string(forKey: Keys.gpsdEndpoint.configKey, default: defaults.gpsdEndpoint.description)
        guard let parsed = GPSDEndpoint(parsing: endpoint) else {
            throw ConfigurationError(key: Keys.gpsdEndpoint.name, problem: "expected HOST:PORT, for example 127.0.0.1:2947; got '\(endpoint)'")
        }
        result.gpsdEndpoint = parsed

        var rules = FixAcceptanceRules()
        let firstReportWait = config.double(forKey: Keys.gpsdFirstReportWait.configKey, default: rules.firstReportWait.secondsValue)
        guard firstReportWait.isFinite, (0...60).contains(firstReportWait) else {
            throw ConfigurationError(key: Keys.gpsdFirstReportWait.name, problem: "expected 0 to 60 seconds (0: no wait); got \(firstReportWait)")
        }
        rules.firstReportWait = .milliseconds(Int64((firstReportWait * 1000).rounded()))
        rules.timeout = try duration(config, Keys.fixTimeout, default: rules.timeout, minimum: 0.1)
        let mode = config.int(forKey: Keys.fixMinimumMode.configKey, default: rules.minimumMode.rawValue)
        guard let minimumMode = FixMode(rawValue: mode) else {
            throw ConfigurationError(key: Keys.fixMinimumMode.name, problem: "expected 2 or 3; got \(mode)")
        }
        rules.minimumMode = minimumMode
        rules.maximumErrorMeters = try positive(config, Keys.fixMaximumError, default: rules.maximumErrorMeters)
        rules.timeoutFallbackErrorMeters = try positive(config, Keys.fixFallbackError, default: rules.timeoutFallbackErrorMeters)
        guard rules.timeoutFallbackErrorMeters >= rules.maximumErrorMeters else {
            throw ConfigurationError(key: Keys.fixFallbackError.name, problem: "must be at least fix.max_error_m (\(rules.maximumErrorMeters))")
        }
        rules.acceptUnknownError = config.bool(forKey: Keys.fixAcceptUnknownError.configKey, default: rules.acceptUnknownError)
        rules.requireTime = config.bool(forKey: Keys.fixRequireTime.configKey, default: rules.requireTime)
        rules.noSatelliteTimeout = try duration(config, Keys.fixNoSatelliteTimeout, default: rules.noSatelliteTimeout, minimum: 0.1)
        result.fixRules = rules

        var schedule = ScheduleConfiguration()
        schedule.ttl = try duration(config, Keys.scheduleTTL, default: schedule.ttl, minimum: 0.1)
        schedule.expireAfter = try duration(config, Keys.scheduleExpireAfter, default: schedule.expireAfter, minimum: 0.1)
        guard schedule.expireAfter >= schedule.ttl else {
            throw ConfigurationError(key: Keys.scheduleExpireAfter.name, problem: "must be at least schedule.ttl_s")
        }
        schedule.retryInitial = try duration(config, Keys.scheduleRetryInitial, default: schedule.retryInitial, minimum: 0.1)
        schedule.retryMaximum = try duration(config, Keys.scheduleRetryMaximum, default: schedule.retryMaximum, minimum: 0.1)
        guard schedule.retryMaximum >= schedule.retryInitial else {
            throw ConfigurationError(key: Keys.scheduleRetryMaximum.name, problem: "must be at least schedule.retry_initial_s")
        }
        let burst = config.int(forKey: Keys.refreshBurst.configKey, default: schedule.refreshBurst)
        guard (0...10_000).contains(burst) else {
            throw ConfigurationError(key: Keys.refreshBurst.name, problem: "expected 0 to 10000; got \(burst)")
        }
        schedule.refreshBurst = burst
        schedule.refreshInterval = try duration(config, Keys.refreshInterval, default: schedule.refreshInterval, minimum: 0.001)
        let stationary = config.double(forKey: Keys.placesStationaryDistance.configKey, default: schedule.stationaryDistanceMeters)
        guard stationary.isFinite, stationary >= 0 else {
            throw ConfigurationError(key: Keys.placesStationaryDistance.name, problem: "expected 0 or more metres; got \(stationary)")
        }
        schedule.stationaryDistanceMeters = stationary
        result.schedule = schedule

        result.stateFile = try path(config, Keys.stateFile, default: defaults.stateFile)
        let power = config.string(forKey: Keys.stateDefault.configKey, default: defaults.defaultPower.rawValue)
        guard let defaultPower = PowerState(rawValue: power) else {
            throw ConfigurationError(key: Keys.stateDefault.name, problem: "expected foreground or background; got '\(power)'")
        }
        result.defaultPower = defaultPower
        result.stateDirectory = try path(config, Keys.stateDirectory, default: defaults.stateDirectory)

        let latitude = config.double(forKey: Keys.staticLatitude.configKey)
        let longitude = config.double(forKey: Keys.staticLongitude.configKey)
        if latitude != nil || longitude != nil {
            guard let latitude, let longitude else {
                throw ConfigurationError(key: (latitude == nil ? Keys.staticLatitude : Keys.staticLongitude).name, problem: "a static location needs both latitude and longitude")
            }
            let location = DaemonConfiguration.StaticLocation(
                latitude: latitude, longitude: longitude,
                altitudeMeters: config.double(forKey: Keys.staticAltitude.configKey),
                errorMeters: config.double(forKey: Keys.staticError.configKey))
            do {
                _ = try StaticFixSource(
                    latitude: location.latitude, longitude: location.longitude,
                    altitudeMeters: location.altitudeMeters, horizontalErrorMeters: location.errorMeters)
            } catch {
                throw ConfigurationError(key: "static", problem: "\(error)")
            }
            result.staticLocation = location
        }
        if !result.gpsdEnabled, result.staticLocation == nil {
            throw ConfigurationError(key: Keys.gpsdEnabled.name, problem: "with gpsd disabled, static.latitude and static.longitude are needed")
        }

        if let index = config.string(forKey: Keys.indexPath.configKey), !index.isEmpty {
            result.indexPath = try path(config, Keys.indexPath, default: index)
        }
        result.socketPath = try path(config, Keys.socketPath, default: defaults.socketPath)
        let modeText = config.string(forKey: Keys.socketMode.configKey, default: "0660")
        guard let socketMode = UInt32(modeText, radix: 8), socketMode <= 0o777 else {
            throw ConfigurationError(key: Keys.socketMode.name, problem: "expected an octal file mode like 0660; got '\(modeText)'")
        }
        result.socketMode = socketMode
        var limits = ServerLimits()
        limits.headTimeout = try duration(config, Keys.apiHeadTimeout, default: limits.headTimeout, minimum: 0.05)
        limits.idleTimeout = try duration(config, Keys.apiIdleTimeout, default: limits.idleTimeout, minimum: 0.05)
        limits.heartbeatInterval = try duration(config, Keys.apiHeartbeat, default: limits.heartbeatInterval, minimum: 0.05)
        let maximumConnections = config.int(forKey: Keys.apiMaximumConnections.configKey, default: limits.maximumConnections)
        guard (1...100_000).contains(maximumConnections) else {
            throw ConfigurationError(key: Keys.apiMaximumConnections.name, problem: "expected 1 to 100000; got \(maximumConnections)")
        }
        limits.maximumConnections = maximumConnections
        let perUID = config.int(forKey: Keys.apiMaximumConnectionsPerUID.configKey, default: limits.maximumConnectionsPerUID)
        guard (1...100_000).contains(perUID) else {
            throw ConfigurationError(key: Keys.apiMaximumConnectionsPerUID.name, problem: "expected 1 to 100000; got \(perUID)")
        }
        limits.maximumConnectionsPerUID = perUID
        result.limits = limits
        if let path = config.string(forKey: Keys.outputsEnvFile.configKey), !path.isEmpty {
            result.envOutput = try self.path(config, Keys.outputsEnvFile, default: path)
        }
        if let path = config.string(forKey: Keys.outputsPrometheusFile.configKey), !path.isEmpty {
            result.prometheusOutput = try self.path(config, Keys.outputsPrometheusFile, default: path)
        }
        let outputLevel = config.string(forKey: Keys.outputsLevel.configKey, default: "exact")
        guard let outputPrecision = PrecisionLevel(rawValue: outputLevel) else {
            throw ConfigurationError(key: Keys.outputsLevel.name, problem: "expected exact, postal, locality, region, country or none; got '\(outputLevel)'")
        }
        let outputDecimals = config.int(forKey: Keys.outputsDecimals.configKey)
        if let outputDecimals, !(0...9).contains(outputDecimals) {
            throw ConfigurationError(key: Keys.outputsDecimals.name, problem: "expected 0 to 9; got \(outputDecimals)")
        }
        if outputDecimals != nil, !Grant.levelsWithDecimals.contains(outputPrecision) {
            throw ConfigurationError(
                key: Keys.outputsDecimals.name,
                problem: "rounded coordinates apply only with outputs.level postal, locality or region; with \(outputPrecision.rawValue) remove outputs.decimals")
        }
        result.outputGrant = Grant(level: outputPrecision, coordinateDecimals: outputDecimals)
        if let group = config.string(forKey: Keys.outputsGroup.configKey), !group.isEmpty {
            guard let gid = AccountNames.gid(named: group) else {
                throw ConfigurationError(key: Keys.outputsGroup.name, problem: "no such group: '\(group)' (a group name or number)")
            }
            result.outputGroup = DaemonConfiguration.OutputGroup(name: group, gid: gid)
        }
        let outputModeText = config.string(forKey: Keys.outputsMode.configKey, default: "0644")
        guard let outputMode = UInt32(outputModeText, radix: 8), outputMode <= 0o777 else {
            throw ConfigurationError(key: Keys.outputsMode.name, problem: "expected an octal file mode like 0640; got '\(outputModeText)'")
        }
        result.outputMode = outputMode
        let defaultLevel = config.string(forKey: Keys.accessDefaultLevel.configKey, default: defaults.accessDefault.rawValue)
        guard let accessDefault = PrecisionLevel(rawValue: defaultLevel) else {
            throw ConfigurationError(key: Keys.accessDefaultLevel.name, problem: "expected exact, postal, locality, region, country or none; got '\(defaultLevel)'")
        }
        result.accessDefault = accessDefault
        for text in config.stringArray(forKey: Keys.accessRules.configKey, default: []) {
            do {
                result.accessRules.append(try AccessPolicy.parseRule(text))
            } catch {
                throw ConfigurationError(key: Keys.accessRules.name, problem: "\(error)")
            }
        }
        for text in config.stringArray(forKey: Keys.accessMutate.configKey, default: []) {
            do {
                result.accessMutators.append(try AccessPolicy.parseSubject(text))
            } catch {
                throw ConfigurationError(key: Keys.accessMutate.name, problem: "'\(text)': expected uid:N or gid:N")
            }
        }
        let level = config.string(forKey: Keys.logLevel.configKey, default: defaults.logLevel.rawValue)
        guard let logLevel = Logger.Level(rawValue: level) else {
            throw ConfigurationError(key: Keys.logLevel.name, problem: "expected trace, debug, info, notice, warning, error or critical; got '\(level)'")
        }
        result.logLevel = logLevel
        return result
    }

    private func duration(_ config: ConfigReader, _ key: ConfigurationKey, default value: Duration, minimum: Double) throws -> Duration {
        let seconds = config.double(forKey: key.configKey, default: value.secondsValue)
        guard seconds.isFinite, seconds >= minimum, seconds <= 10 * 365 * 86_400 else {
            throw ConfigurationError(key: key.name, problem: "expected seconds, at least \(minimum); got \(seconds)")
        }
        return .milliseconds(Int64((seconds * 1000).rounded()))
    }

    private func positive(_ config: ConfigReader, _ key: ConfigurationKey, default value: Double) throws -> Double {
        let number = config.double(forKey: key.configKey, default: value)
        guard number.isFinite, number > 0 else {
            throw ConfigurationError(key: key.name, problem: "expected a number above 0; got \(number)")
        }
        return number
    }

    private func path(_ config: ConfigReader, _ key: ConfigurationKey, default value: String) throws -> String {
        let path = config.string(forKey: key.configKey, default: value)
        guard path.hasPrefix("/"), !path.contains("\0"), path.count > 1 else {
            throw ConfigurationError(key: key.name, problem: "expected an absolute path; got '\(path)'")
        }
        return path.hasSuffix("/") ? String(path.dropLast()) : path
    }
}

/// Records values that were present but unusable (a word where a number belongs), which the
/// reader methods with defaults would otherwise replace by the default without a word.
final class FailureRecorder: AccessReporter, Sendable {
    struct Failure: Sendable {
        var key: String
        var problem: String
    }

    private let failures = Mutex<[Failure]>([])

    var first: Failure? { failures.withLock { $0.first } }

    func report(_ event: AccessEvent) {
        let key = event.metadata.key.components.joined(separator: ".")
        var problem: String?
        if let conversionError = event.conversionError {
            problem = "expected \(event.metadata.valueType); \(conversionError)"
        } else if case .failure(let error) = event.result {
            problem = "\(error)"
        } else {
            for provider in event.providerResults {
                if case .failure(let error) = provider.result {
                    problem = "from \(provider.providerName): \(error)"
                    break
                }
            }
        }
        guard let problem else { return }
        failures.withLock { $0.append(Failure(key: key, problem: problem)) }
    }
}

