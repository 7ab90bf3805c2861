import GeoAttrCore
import GeoAttrDaemonConfig
import GeoAttrGPSD
import GeoAttrModel
import GeoAttrServer
import GeoAttrSystemd
import Logging
import GeoAttrSettings

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The parts a configuration describes, made the same way at start and on every reload.
extension DaemonConfiguration {
    func accessPolicy() -> AccessPolicy {
        AccessPolicy(rules: accessRules, defaultGrant: Grant(level: accessDefault), mutators: accessMutators, daemonUID: getuid())
    }

    /// gpsd, or the static location when gpsd is disabled. `logger` is the daemon's: gpsd's
    /// lines name their part (`geoattrd.gpsd:`).
    func fixSource(logger: Logger) -> any FixSource {
        let gpsdLogger = logger.component("gpsd")
        if gpsdEnabled {
            return GPSDFixSource(endpoint: gpsdEndpoint, rules: fixRules, logger: gpsdLogger)
        }
        return staticSource() ?? GPSDFixSource(endpoint: gpsdEndpoint, logger: gpsdLogger)
    }

    func staticSource() -> StaticFixSource? {
        guard let location = staticLocation else { return nil }
        return try? StaticFixSource(
            latitude: location.latitude, longitude: location.longitude,
            altitudeMeters: location.altitudeMeters, horizontalErrorMeters: location.errorMeters)
    }

    func outputSettings() -> FileOutputs.Settings {
        FileOutputs.Settings(grant: outputGrant, group: outputGroup?.gid, mode: outputMode)
    }
}
