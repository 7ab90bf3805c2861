package import Configuration

/// One configuration key: its name in the file, its type, its default as `--check-config`
/// prints it, its geoattrd flag if it has one, and whether a reload applies it. Its environment
/// variable follows from the name.
package struct ConfigurationKey: Sendable, Hashable {
    package enum Applied: Sendable, Hashable {
        /// SIGHUP applies it to the running daemon.
        case reload
        /// Read at start; a reload that changes it says it waits for the next restart.
        case restart
    }

    package var name: String
    package var type: ConfigType
    /// The default, as `--check-config` prints it ("" for none).
    package var defaultValue: String
    /// geoattrd's long flag (`--socket`), if the key has one.
    package var flag: String?
    package var applied: Applied

    package init(_ name: String, _ type: ConfigType, default defaultValue: String, flag: String?, applied: Applied) {
        self.name = name
        self.type = type
        self.defaultValue = defaultValue
        self.flag = flag
        self.applied = applied
    }

    /// `GEOATTRD_` + the name in upper case with dots as underscores.
    package var environmentVariable: String {
        DaemonConfiguration.environmentPrefix + name.uppercased().replacingDots()
    }

    package var components: [String] { name.split(separator: ".").map(String.init) }
    package var configKey: ConfigKey { ConfigKey(components) }
}

/// Every key the daemon knows, in the order of config/geoattrd.yaml. Reading, validation,
/// `--check-config`, the flags and the reload warnings all name keys through this table. A key in
/// the file or the environment that is not here is an error, never ignored: a misspelt `access`
/// key would otherwise leave everyone at the default.
package enum ConfigurationKeys {
    package static let gpsdEnabled = ConfigurationKey("gpsd.enabled", .bool, default: "true", flag: nil, applied: .reload)
    package static let gpsdEndpoint = ConfigurationKey("gpsd.endpoint", .string, default: "127.0.0.1:2947", flag: "gpsd", applied: .reload)
    package static let gpsdFirstReportWait = ConfigurationKey("gpsd.first_report_wait_s", .double, default: "1", flag: nil, applied: .reload)
    package static let fixTimeout = ConfigurationKey("fix.timeout_s", .double, default: "60", flag: nil, applied: .reload)
    package static let fixMinimumMode = ConfigurationKey("fix.min_mode", .int, default: "2", flag: nil, applied: .reload)
    package static let fixMaximumError = ConfigurationKey("fix.max_error_m", .double, default: "100", flag: nil, applied: .reload)
    package static let fixFallbackError = ConfigurationKey("fix.fallback_error_m", .double, default: "500", flag: nil, applied: .reload)
    package static let fixAcceptUnknownError = ConfigurationKey("fix.accept_unknown_error", .bool, default: "true", flag: nil, applied: .reload)
    package static let fixRequireTime = ConfigurationKey("fix.require_time", .bool, default: "false", flag: nil, applied: .reload)
    package static let fixNoSatelliteTimeout = ConfigurationKey("fix.no_satellite_timeout_s", .double, default: "20", flag: nil, applied: .reload)
    package static let scheduleTTL = ConfigurationKey("schedule.ttl_s", .double, default: "3600", flag: nil, applied: .reload)
    package static let scheduleExpireAfter = ConfigurationKey("schedule.expire_after_s", .double, default: "86400", flag: nil, applied: .reload)
    package static let scheduleRetryInitial = ConfigurationKey("schedule.retry_initial_s", .double, default: "30", flag: nil, applied: .reload)
    package static let scheduleRetryMaximum = ConfigurationKey("schedule.retry_max_s", .double, default: "1800", flag: nil, applied: .reload)
    package static let refreshBurst = ConfigurationKey("refresh.burst", .int, default: "6", flag: nil, applied: .reload)
    package static let refreshInterval = ConfigurationKey("refresh.interval_s", .double, default: "600", flag: nil, applied: .reload)
    package static let placesStationaryDistance = ConfigurationKey("places.stationary_distance_m", .double, default: "150", flag: nil, applied: .reload)
    package static let stateFile = ConfigurationKey("state.file", .string, default: "/run/geoattrd/state", flag: "state-file", applied: .restart)
    package static let stateDefault = ConfigurationKey("state.default", .string, default: "foreground", flag: nil, applied: .restart)
    package static let stateDirectory = ConfigurationKey("state.dir", .string, default: "/var/lib/geoattrd", flag: "state-dir", applied: .restart)
    package static let staticLatitude = ConfigurationKey("static.latitude", .double, default: "", flag: nil, applied: .reload)
    package static let staticLongitude = ConfigurationKey("static.longitude", .double, default: "", flag: nil, applied: .reload)
    package static let staticAltitude = ConfigurationKey("static.altitude_m", .double, default: "", flag: nil, applied: .reload)
    package static let staticError = ConfigurationKey("static.error_m", .double, default: "", flag: nil, applied: .reload)
    package static let indexPath = ConfigurationKey("index.path", .string, default: "/usr/share/geoattrd/world.gidx", flag: "index", applied: .restart)
    package static let socketPath = ConfigurationKey("socket.path", .string, default: "/run/geoattrd/geoattrd.sock", flag: "socket", applied: .restart)
    package static let socketMode = ConfigurationKey("socket.mode", .string, default: "0660", flag: nil, applied: .restart)
    package static let apiHeadTimeout = ConfigurationKey("api.head_timeout_s", .double, default: "10", flag: nil, applied: .restart)
    package static let apiIdleTimeout = ConfigurationKey("api.idle_timeout_s", .double, default: "60", flag: nil, applied: .restart)
    package static let apiHeartbeat = ConfigurationKey("api.heartbeat_s", .double, default: "30", flag: nil, applied: .restart)
    package static let apiMaximumConnections = ConfigurationKey("api.max_connections", .int, default: "1024", flag: nil, applied: .restart)
    package static let apiMaximumConnectionsPerUID = ConfigurationKey("api.max_connections_per_uid", .int, default: "64", flag: nil, applied: .restart)
    package static let apiMetricsSocket = ConfigurationKey("api.metrics_socket", .string, default: "", flag: nil, applied: .restart)
    package static let outputsEnvFile = ConfigurationKey("outputs.env_file", .string, default: "", flag: nil, applied: .restart)
    package static let outputsPrometheusFile = ConfigurationKey("outputs.prometheus_file", .string, default: "", flag: nil, applied: .restart)
    package static let outputsLevel = ConfigurationKey("outputs.level", .string, default: "country", flag: nil, applied: .reload)
    package static let outputsDecimals = ConfigurationKey("outputs.decimals", .int, default: "", flag: nil, applied: .reload)
    package static let outputsGroup = ConfigurationKey("outputs.group", .string, default: "", flag: nil, applied: .reload)
    package static let outputsMode = ConfigurationKey("outputs.mode", .string, default: "0640", flag: nil, applied: .reload)
    package static let accessDefaultLevel = ConfigurationKey("access.default_level", .string, default: "exact", flag: nil, applied: .reload)
    package static let accessRules = ConfigurationKey("access.rules", .stringArray, default: "[]", flag: nil, applied: .reload)
    package static let accessMutate = ConfigurationKey("access.mutate", .stringArray, default: "[]", flag: nil, applied: .reload)
    package static let logLevel = ConfigurationKey("log.level", .string, default: "info", flag: "log-level", applied: .reload)

    package static let all: [ConfigurationKey] = [
        gpsdEnabled,
        gpsdEndpoint,
        gpsdFirstReportWait,
        fixTimeout,
        fixMinimumMode,
        fixMaximumError,
        fixFallbackError,
        fixAcceptUnknownError,
        fixRequireTime,
        fixNoSatelliteTimeout,
        scheduleTTL,
        scheduleExpireAfter,
        scheduleRetryInitial,
        scheduleRetryMaximum,
        refreshBurst,
        refreshInterval,
        placesStationaryDistance,
        stateFile,
        stateDefault,
        stateDirectory,
        staticLatitude,
        staticLongitude,
        staticAltitude,
        staticError,
        indexPath,
        socketPath,
        socketMode,
        apiHeadTimeout,
        apiIdleTimeout,
        apiHeartbeat,
        apiMaximumConnections,
        apiMaximumConnectionsPerUID,
        apiMetricsSocket,
        outputsEnvFile,
        outputsPrometheusFile,
        outputsLevel,
        outputsDecimals,
        outputsGroup,
        outputsMode,
        accessDefaultLevel,
        accessRules,
        accessMutate,
        logLevel,
    ]

    package static let byName: [String: ConfigurationKey] = Dictionary(all.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })

    /// `GEOATTRD_*` variables that belong to geoattrd's other tools, not to the daemon's
    /// configuration: allowed in the daemon's environment.
    package static let otherVariables: Set<String> = ["GEOATTRD_INDEX", "GEOATTRD_SOCKET"]

    /// The error for a name that is not a key, with the nearest valid name when one is close.
    static func unknown(_ name: String, as spelled: String? = nil) -> ConfigurationError {
        let candidates = all.map(\.name)
        var hint = ""
        if let nearest = nearest(to: name, in: candidates) {
            hint = spelled == nil ? " (did you mean \(nearest)?)" : " (did you mean \(byName[nearest]?.environmentVariable ?? nearest)?)"
        }
        let shown = spelled ?? name
        return ConfigurationError(key: shown.utf8.count <= 200 ? shown : String(shown.prefix(200)) + "...", problem: "unknown key\(hint); unknown keys are refused so that a typo never changes what clients may see")
    }

    /// The candidate with the smallest edit distance, if it is small for the name's length. A
    /// key nested under a valid key (`access.rules.uid:1001`, a list written as a map) suggests
    /// that key.
    static func nearest(to name: String, in candidates: [String]) -> String? {
        if let parent = candidates.first(where: { name.hasPrefix($0 + ".") }) { return parent }
        // A name far longer than any key is no typo of one (and the distance is quadratic).
        guard name.utf8.count <= 64 else { return nil }
        let scored = candidates.map { ($0, editDistance(name, $0)) }.min { $0.1 < $1.1 }
        guard let (best, distance) = scored, distance <= max(2, best.count / 4) else { return nil }
        return best
    }

    /// Levenshtein distance over UTF-8 bytes (names are ASCII).
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a.utf8), b = Array(b.utf8)
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)
                current[j] = min(previous[j] + 1, current[j - 1] + 1, substitution)
            }
            swap(&previous, &current)
        }
        return previous[b.count]
    }
}

extension String {
    fileprivate func replacingDots() -> String {
        String(map { $0 == "." ? "_" : $0 })
    }
}
