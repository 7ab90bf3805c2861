import GeoIndex
package import GeoAttrCore
package import GeoAttrModel
package import GeoAttrSettings
package import Logging

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
    package var stateFile = ProductPaths.stateFile
    package var defaultPower = PowerState.foreground
    package var stateDirectory = ProductPaths.stateDirectory
    package var staticLatitude: Double?
    package var staticLongitude: Double?
    package var staticAltitude: Double?
    package var staticError: Double?
    /// The static location, when both coordinates are set.
    package var staticLocation: StaticLocation? {
        guard let staticLatitude, let staticLongitude else { return nil }
        return StaticLocation(latitude: staticLatitude, longitude: staticLongitude, altitudeMeters: staticAltitude, errorMeters: staticError)
    }
    /// The index file (`index.path`; empty in the file: the installed one). Never looked for
    /// elsewhere: a service must not depend on its working directory.
    package var indexPath = IndexLocator.installedIndex
    package var socketPath = ProductPaths.socket
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
        ConfigurationKeys.all.compactMap { key in key.effectiveValue(in: self).map { (key.name, $0) } }
    }

    /// The keys whose effective value differs from `old`'s, among those applied as `applied`.
    package func changedKeys(from old: DaemonConfiguration, applied: ConfigurationKey.Applied) -> [String] {
        let before = Dictionary(old.effectiveSettings.map { ($0.key, $0.value) }, uniquingKeysWith: { first, _ in first })
        let after = Dictionary(effectiveSettings.map { ($0.key, $0.value) }, uniquingKeysWith: { first, _ in first })
        return ConfigurationKeys.all.filter { $0.applied == applied && before[$0.name] != after[$0.name] }.map(\.name)
    }

    /// The default configuration file, read when present.
    package static let defaultFile = ProductPaths.configurationFile
    package static let environmentPrefix = "GEOATTRD_"
}
