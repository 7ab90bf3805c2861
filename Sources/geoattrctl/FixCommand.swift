import ArgumentParser
import FoundationEssentials
import GeoAttrGPSD
import GeoAttrModel
import Logging
import GeoAttrSettings

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

struct FixCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fix",
        abstract: "Take one fix from gpsd and print it as one JSON object.",
        discussion: """
            Prints {"lat", "lon", "alt_m", "mode", "error_m", "time", "time_to_fix_ms", "fallback"}. \
            error_m is null when the receiver gives no error estimate (or only gpsd's "no DOP" \
            placeholder); fallback is true when no report met --max-error and the best one within \
            --fallback-error was taken at the timeout or when gpsd closed the connection. The \
            first report of the connection, and a report without an estimate from a receiver \
            not yet seen never to send one, waits up to --first-report-wait for the next report, \
            and the better of the two is printed. time is the receiver's \
            UTC time (corrected for GPS week rollover) or null when the accepted report had none \
            or one that cannot be right (before 2024, or over a year ahead of the system clock).

            Exit codes: 0 fix; 64 invalid arguments; 69 gpsd unreachable; 74 connection to gpsd \
            lost; 75 no acceptable fix within the timeout (including: no satellite visible); \
            71 the system refused a thread or descriptor.
            """
    )

    @Option(help: "gpsd address as HOST:PORT.")
    var gpsd: String = GPSDEndpoint.default.description

    @Option(help: "Give up after this many seconds.")
    var timeout: Double = 60

    @Option(name: .customLong("max-error"), help: "Accept at once a fix whose horizontal error is at most this many metres.")
    var maxError: Double = 100

    @Option(name: .customLong("fallback-error"), help: "On timeout, accept the best fix seen within this many metres.")
    var fallbackError: Double = 500

    @Option(name: .customLong("first-report-wait"), help: "Seconds the first report waits for a better next one (0: none).")
    var firstReportWait: Double = 1

    @Option(name: .customLong("no-satellite-timeout"), help: "Give up early after this many seconds without any satellite signal.")
    var noSatelliteTimeout: Double = 20

    @Option(name: .customLong("min-mode"), help: "Least fix mode accepted: 2 or 3.")
    var minimumMode: Int = 2

    @Flag(name: .customLong("require-error-estimate"), help: "Refuse fixes from receivers that report no error estimate.")
    var requireErrorEstimate = false

    @Flag(name: .customLong("require-time"), help: "Refuse reports without the receiver's time.")
    var requireTime = false

    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical.")
    var logLevel: String = "warning"

    func validate() throws {
        guard GPSDEndpoint(parsing: gpsd) != nil else {
            throw ValidationError("--gpsd must be HOST:PORT, for example 127.0.0.1:2947; got '\(gpsd)'")
        }
        guard timeout.isFinite, timeout > 0, timeout <= 86_400 else {
            throw ValidationError("--timeout must be a number of seconds above 0 and at most 86400")
        }
        guard maxError.isFinite, maxError > 0 else { throw ValidationError("--max-error must be above 0") }
        guard fallbackError.isFinite, fallbackError >= maxError else {
            throw ValidationError("--fallback-error must be at least --max-error")
        }
        guard firstReportWait.isFinite, firstReportWait >= 0, firstReportWait <= 60 else {
            throw ValidationError("--first-report-wait must be 0 to 60 seconds")
        }
        guard noSatelliteTimeout.isFinite, noSatelliteTimeout > 0 else {
            throw ValidationError("--no-satellite-timeout must be above 0")
        }
        guard FixMode(rawValue: minimumMode) != nil else { throw ValidationError("--min-mode must be 2 or 3") }
        guard Logger.Level(rawValue: logLevel) != nil else {
            throw ValidationError("--log-level must be one of trace, debug, info, notice, warning, error, critical")
        }
    }

    func run() async throws {
        signal(SIGPIPE, SIG_IGN)
        let level = Logger.Level(rawValue: logLevel) ?? .warning
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        guard let endpoint = GPSDEndpoint(parsing: gpsd) else { throw ExitCodes.usage }
        var rules = FixAcceptanceRules()
        rules.timeout = .milliseconds(Int64((timeout * 1000).rounded()))
        rules.maximumErrorMeters = maxError
        rules.timeoutFallbackErrorMeters = fallbackError
        rules.noSatelliteTimeout = .milliseconds(Int64((noSatelliteTimeout * 1000).rounded()))
        rules.minimumMode = FixMode(rawValue: minimumMode) ?? .twoDimensional
        rules.acceptUnknownError = !requireErrorEstimate
        rules.requireTime = requireTime
        rules.firstReportWait = .milliseconds(Int64((firstReportWait * 1000).rounded()))

        let source = GPSDFixSource(endpoint: endpoint, rules: rules, logger: Logger(label: "geoattrctl.fix"))
        do {
            let fix = try await source.fix()
            StandardStreams.out(try FixOutput(fix).json())
        } catch let error as FixError {
            StandardStreams.err(error.description)
            throw ExitCodes.code(for: error)
        }
    }
}

/// The JSON object `geoattrctl fix` prints.
struct FixOutput: Encodable {
    var lat: Double
    var lon: Double
    var altM: Double?
    var mode: Int
    var errorM: Double?
    var time: String?
    var timeToFixMs: Double?
    var fallback: Bool

    init(_ fix: Fix) {
        lat = fix.latitude
        lon = fix.longitude
        altM = fix.altitudeMeters
        mode = fix.mode.rawValue
        errorM = fix.horizontalErrorMeters
        time = fix.receiverTime?.iso8601
        timeToFixMs = fix.timeToFixMilliseconds.map { ($0 * 10).rounded() / 10 }
        fallback = fix.acceptedAsFallback == true
    }

    enum CodingKeys: String, CodingKey {
        case lat, lon, altM = "alt_m", mode, errorM = "error_m", time, timeToFixMs = "time_to_fix_ms", fallback
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(lat, forKey: .lat)
        try container.encode(lon, forKey: .lon)
        try container.encode(altM, forKey: .altM)
        try container.encode(mode, forKey: .mode)
        try container.encode(errorM, forKey: .errorM)
        try container.encode(time, forKey: .time)
        try container.encode(timeToFixMs, forKey: .timeToFixMs)
        try container.encode(fallback, forKey: .fallback)
    }

    func json() throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let data = try encoder.encode(self)
        return String(decoding: data, as: UTF8.self)
    }
}
