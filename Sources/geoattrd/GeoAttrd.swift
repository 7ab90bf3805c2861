import ArgumentParser
import GeoAttrCore
import GeoAttrGPSD
import GeoAttrModel
import Logging

#if canImport(Glibc)
import Glibc
#endif

/// The daemon. Until the schedule, cache and socket API land (issues 4 and 5), it takes one fix
/// through the same engine the daemon will use and logs it: the spine, end to end.
@main
struct GeoAttrd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "geoattrd",
        abstract: "Serve OpenTelemetry geo.* attributes from one-shot gpsd fixes (early build: one fix, then exit)."
    )

    @Option(help: "gpsd address as HOST:PORT.")
    var gpsd: String = GPSDEndpoint.default.description

    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical.")
    var logLevel: String = "info"

    func validate() throws {
        guard GPSDEndpoint(parsing: gpsd) != nil else {
            throw ValidationError("--gpsd must be HOST:PORT, for example 127.0.0.1:2947; got '\(gpsd)'")
        }
        guard Logger.Level(rawValue: logLevel) != nil else {
            throw ValidationError("--log-level must be one of trace, debug, info, notice, warning, error, critical")
        }
    }

    func run() async throws {
        signal(SIGPIPE, SIG_IGN)
        let level = Logger.Level(rawValue: logLevel) ?? .info
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "geoattrd")
        guard let endpoint = GPSDEndpoint(parsing: gpsd) else { throw ExitCode(64) }
        let source = GPSDFixSource(endpoint: endpoint, logger: Logger(label: "geoattrd.gpsd"))
        do {
            let fix = try await source.fix()
            logger.info(
                "fix accepted",
                metadata: [
                    "lat": "\(fix.latitude)", "lon": "\(fix.longitude)", "mode": "\(fix.mode.rawValue)",
                    "error_m": "\(fix.horizontalErrorMeters.map { "\($0)" } ?? "unknown")",
                    "time": "\(fix.time.iso8601)", "time_to_fix_ms": "\(fix.timeToFixMilliseconds ?? 0)",
                ])
        } catch {
            logger.error("fix failed: \(error)")
            throw ExitCode(75)
        }
    }
}
