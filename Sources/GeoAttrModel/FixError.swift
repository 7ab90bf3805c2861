/// Why a fix attempt produced no fix. Each message says what an operator can do about it.
public enum FixError: Error, Sendable, Hashable, CustomStringConvertible {
    /// gpsd could not be reached at all.
    case gpsdUnreachable(endpoint: String, reason: String)
    /// gpsd closed the connection (or the read failed) during the attempt.
    case connectionLost(reason: String)
    /// The receiver reported, but no report met the acceptance rules before the timeout.
    case noFix(timeoutSeconds: Double, reports: Int, bestErrorMeters: Double?)
    /// No report from any receiver arrived before the timeout.
    case timeout(timeoutSeconds: Double)
    /// The receiver's sky view showed no satellite with a signal for this long: indoors or
    /// covered, so waiting for the full timeout would only burn battery.
    case noSatellites(seconds: Double)
    /// The attempt was cancelled (the device went to the background, or shutdown).
    case cancelled
    /// The operating system refused a resource the attempt needs (thread, descriptor).
    case systemResources(reason: String)

    public var description: String {
        switch self {
        case .gpsdUnreachable(let endpoint, let reason):
            return "gpsd is unreachable at \(endpoint) (\(reason)): is gpsd running and listening there? "
                + "Try `systemctl status gpsd.socket gpsd` and `gpspipe -w -n 5`."
        case .connectionLost(let reason):
            return "lost the connection to gpsd during the fix (\(reason))."
        case .noFix(let timeout, let reports, let best):
            let bestText = best.map { ", best horizontal error seen \(Self.format($0)) m" } ?? ""
            return "no acceptable fix within \(Self.format(timeout)) s (\(reports) reports\(bestText)): "
                + "the receiver needs a clearer view of the sky, or raise the timeout or error bound."
        case .timeout(let timeout):
            return "no report from any GPS receiver within \(Self.format(timeout)) s: "
                + "is a receiver attached to gpsd? Check `gpspipe -w -n 5` for a DEVICES line."
        case .noSatellites(let seconds):
            return "the receiver saw no satellite signal for \(Self.format(seconds)) s: "
                + "it is indoors or its antenna is covered; gave up early to save power."
        case .cancelled:
            return "the fix attempt was cancelled."
        case .systemResources(let reason):
            return "the system refused a resource for the fix attempt: \(reason)."
        }
    }

    /// Every `code`, for metrics that show each outcome from the start.
    public static let codes = ["gpsd_unreachable", "connection_lost", "no_fix", "timeout", "no_satellites", "cancelled", "system_resources"]

    /// A stable machine-readable name of the outcome: metrics labels, API status fields.
    public var code: String {
        switch self {
        case .gpsdUnreachable: "gpsd_unreachable"
        case .connectionLost: "connection_lost"
        case .noFix: "no_fix"
        case .timeout: "timeout"
        case .noSatellites: "no_satellites"
        case .cancelled: "cancelled"
        case .systemResources: "system_resources"
        }
    }

    private static func format(_ value: Double) -> String {
        let rounded = (value * 10).rounded() / 10
        return rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)
    }
}
