import GeoAttrCore
import GeoAttrModel
import GeoAttrSettings

/// The rules that join keys, checked once every key is read: each names the key to change.
enum ConfigurationChecks {
    static func check(_ configuration: DaemonConfiguration) throws {
        let fix = configuration.fixRules
        guard fix.timeoutFallbackErrorMeters >= fix.maximumErrorMeters else {
            throw ConfigurationError(
                key: ConfigurationKey.fixFallbackError.name, problem: "must be at least fix.max_error_m (\(fix.maximumErrorMeters))")
        }
        let schedule = configuration.schedule
        guard schedule.expireAfter >= schedule.ttl else {
            throw ConfigurationError(key: ConfigurationKey.scheduleExpireAfter.name, problem: "must be at least schedule.ttl_s")
        }
        guard schedule.retryMaximum >= schedule.retryInitial else {
            throw ConfigurationError(key: ConfigurationKey.scheduleRetryMaximum.name, problem: "must be at least schedule.retry_initial_s")
        }
        try checkStaticLocation(configuration)
        try checkOutputDecimals(configuration)
        try checkMetricsSocket(configuration)
    }

    /// Both coordinates or neither, valid ones; and with gpsd off, a static location is the
    /// only source of fixes.
    private static func checkStaticLocation(_ configuration: DaemonConfiguration) throws {
        let latitude = configuration.staticLatitude, longitude = configuration.staticLongitude
        if latitude != nil || longitude != nil {
            guard latitude != nil, longitude != nil else {
                throw ConfigurationError(
                    key: (latitude == nil ? ConfigurationKey.staticLatitude : .staticLongitude).name,
                    problem: "a static location needs both latitude and longitude")
            }
        }
        if let location = configuration.staticLocation {
            do {
                _ = try StaticFixSource(
                    latitude: location.latitude, longitude: location.longitude,
                    altitudeMeters: location.altitudeMeters, horizontalErrorMeters: location.errorMeters)
            } catch {
                throw ConfigurationError(key: "static", problem: "\(error)")
            }
        }
        if !configuration.gpsdEnabled, configuration.staticLocation == nil {
            throw ConfigurationError(
                key: ConfigurationKey.gpsdEnabled.name, problem: "with gpsd disabled, static.latitude and static.longitude are needed")
        }
    }

    private static func checkOutputDecimals(_ configuration: DaemonConfiguration) throws {
        let grant = configuration.outputGrant
        if grant.coordinateDecimals != nil, !Grant.levelsWithDecimals.contains(grant.level) {
            throw ConfigurationError(
                key: ConfigurationKey.outputsDecimals.name,
                problem: "rounded coordinates apply only with outputs.level postal, locality or region; with \(grant.level.rawValue) remove outputs.decimals")
        }
    }

    /// The metrics socket needs a path of its own that a socket can have: bound over the API's
    /// socket, the state file or an output file, it would take that path's place.
    private static func checkMetricsSocket(_ configuration: DaemonConfiguration) throws {
        guard let metrics = configuration.metricsSocket else { return }
        // sockaddr_un's sun_path holds 108 bytes, its terminating NUL included.
        guard metrics.utf8.count <= 107 else {
            throw ConfigurationError(
                key: ConfigurationKey.apiMetricsSocket.name, problem: "\(metrics.utf8.count) bytes long; a Unix socket's path holds at most 107")
        }
        let taken: [(ConfigurationKey, String?)] = [
            (.socketPath, configuration.socketPath), (.stateFile, configuration.stateFile),
            (.outputsEnvFile, configuration.envOutput), (.outputsPrometheusFile, configuration.prometheusOutput),
        ]
        if let other = taken.first(where: { $0.1 == metrics })?.0 {
            throw ConfigurationError(
                key: ConfigurationKey.apiMetricsSocket.name, problem: "'\(metrics)' is \(other.name) too; the metrics socket needs a path of its own")
        }
    }
}
