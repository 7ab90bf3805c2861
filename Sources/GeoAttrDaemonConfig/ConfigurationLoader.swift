import Configuration
import GeoAttrCore
import GeoAttrLinux
import GeoAttrGPSD
import GeoAttrModel
import GeoAttrServer
import Logging

private typealias Keys = ConfigurationKeys

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
        let known = Dictionary(ConfigurationKeys.all.map { ($0.environmentVariable, $0) }, uniquingKeysWith: { first, _ in first })
        for (name, value) in environment where name.hasPrefix(DaemonConfiguration.environmentPrefix) {
            if ConfigurationKeys.otherVariables.contains(name) { continue }
            guard let key = known[name] else {
                throw ConfigurationKeys.unknown(Self.keyName(ofVariable: name), as: name)
            }
            // A list in a variable is its items separated by commas; the JSON or YAML form would
            // be read as one item holding brackets and quotes.
            if key.type == .stringArray, value.trimmingWhitespace().hasPrefix("[") {
                throw ConfigurationError(
                    key: key.name,
                    problem: "\(name) holds a list as items separated by commas, without brackets or quotes: \(name)=\(Self.listExample(key))")
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

    /// What a list variable holds, for the message that refuses another form.
    static func listExample(_ key: ConfigurationKey) -> String {
        key == ConfigurationKeys.accessMutate ? "uid:0,gid:27" : "uid:1001=country,gid:20=region"
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
        try readGPSD(config, into: &result)
        result.fixRules = try readFixRules(config)
        result.schedule = try readSchedule(config)
        try readState(config, into: &result)
        try readStaticLocation(config, into: &result)
        try readServer(config, into: &result)
        try readOutputs(config, into: &result)
        try readAccessAndLog(config, into: &result)
        try checkMetricsSocket(result)
        return result
    }

    /// gpsd.enabled and gpsd.endpoint.
    private func readGPSD(_ config: ConfigReader, into result: inout DaemonConfiguration) throws {
        let defaults = DaemonConfiguration()
        result.gpsdEnabled = config.bool(forKey: Keys.gpsdEnabled.configKey, default: defaults.gpsdEnabled)
        let endpoint = config.string(forKey: Keys.gpsdEndpoint.configKey, default: defaults.gpsdEndpoint.description)
        guard let parsed = GPSDEndpoint(parsing: endpoint) else {
            throw ConfigurationError(key: Keys.gpsdEndpoint.name, problem: "expected HOST:PORT, for example 127.0.0.1:2947; got '\(endpoint)'")
        }
        result.gpsdEndpoint = parsed
    }

    /// gpsd.first_report_wait_s and fix.*: when a fix is accepted.
    private func readFixRules(_ config: ConfigReader) throws -> FixAcceptanceRules {
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
        return rules
    }

    /// schedule.*, refresh.* and places.*.
    private func readSchedule(_ config: ConfigReader) throws -> ScheduleConfiguration {
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
        return schedule
    }

    /// state.*.
    private func readState(_ config: ConfigReader, into result: inout DaemonConfiguration) throws {
        let defaults = DaemonConfiguration()
        result.stateFile = try path(config, Keys.stateFile, default: defaults.stateFile)
        let power = config.string(forKey: Keys.stateDefault.configKey, default: defaults.defaultPower.rawValue)
        guard let defaultPower = PowerState(rawValue: power) else {
            throw ConfigurationError(key: Keys.stateDefault.name, problem: "expected foreground or background; got '\(power)'")
        }
        result.defaultPower = defaultPower
        result.stateDirectory = try path(config, Keys.stateDirectory, default: defaults.stateDirectory)
    }

    /// static.*, and whether anything gives fixes at all.
    private func readStaticLocation(_ config: ConfigReader, into result: inout DaemonConfiguration) throws {
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
    }

    /// index.path, socket.* and api.*.
    private func readServer(_ config: ConfigReader, into result: inout DaemonConfiguration) throws {
        let defaults = DaemonConfiguration()
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
        if let metrics = config.string(forKey: Keys.apiMetricsSocket.configKey), !metrics.isEmpty {
            result.metricsSocket = try path(config, Keys.apiMetricsSocket, default: metrics)
        }
    }

    /// The metrics socket needs a path of its own that a socket can have: bound over the API's
    /// socket, the state file or an output file, it would take that path's place.
    private func checkMetricsSocket(_ result: DaemonConfiguration) throws {
        guard let metrics = result.metricsSocket else { return }
        // sockaddr_un's sun_path holds 108 bytes, its terminating NUL included.
        guard metrics.utf8.count <= 107 else {
            throw ConfigurationError(
                key: Keys.apiMetricsSocket.name, problem: "\(metrics.utf8.count) bytes long; a Unix socket's path holds at most 107")
        }
        let taken: [(ConfigurationKey, String?)] = [
            (Keys.socketPath, result.socketPath), (Keys.stateFile, result.stateFile),
            (Keys.outputsEnvFile, result.envOutput), (Keys.outputsPrometheusFile, result.prometheusOutput),
        ]
        if let other = taken.first(where: { $0.1 == metrics })?.0 {
            throw ConfigurationError(key: Keys.apiMetricsSocket.name, problem: "'\(metrics)' is \(other.name) too; the metrics socket needs a path of its own")
        }
    }

    /// outputs.*: the files and what they may show.
    private func readOutputs(_ config: ConfigReader, into result: inout DaemonConfiguration) throws {
        if let path = config.string(forKey: Keys.outputsEnvFile.configKey), !path.isEmpty {
            result.envOutput = try self.path(config, Keys.outputsEnvFile, default: path)
        }
        if let path = config.string(forKey: Keys.outputsPrometheusFile.configKey), !path.isEmpty {
            result.prometheusOutput = try self.path(config, Keys.outputsPrometheusFile, default: path)
        }
        let outputLevel = config.string(forKey: Keys.outputsLevel.configKey, default: Keys.outputsLevel.defaultValue)
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
        let outputModeText = config.string(forKey: Keys.outputsMode.configKey, default: Keys.outputsMode.defaultValue)
        guard let outputMode = UInt32(outputModeText, radix: 8), outputMode <= 0o777 else {
            throw ConfigurationError(key: Keys.outputsMode.name, problem: "expected an octal file mode like 0640; got '\(outputModeText)'")
        }
        result.outputMode = outputMode
    }

    /// access.* and log.level.
    private func readAccessAndLog(_ config: ConfigReader, into result: inout DaemonConfiguration) throws {
        let defaults = DaemonConfiguration()
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
