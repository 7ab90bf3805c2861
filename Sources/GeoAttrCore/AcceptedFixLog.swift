import GeoAttrModel
import Logging

extension Scheduler {
    /// What the journal says of a new result. The journal is readable by more people than the
    /// socket's exact level: at info it says that a fix was accepted and how, never where, nor
    /// whether the device moved (the place decision says it crossed a border or stood still) or
    /// how precise the fix was (exact-only on the API). Those are at debug, with the coordinates.
    static func logAccepted(_ fix: Fix, result: LocationResult, decision: PlacePolicy.Decision, logger: Logger) {
        logger.debug(
            "fix position",
            metadata: [
                "lat": "\(fix.latitude)", "lon": "\(fix.longitude)",
                "error_m": "\(fix.horizontalErrorMeters.map { "\($0)" } ?? "unknown")",
                "place": "\(decision.rawValue)", "generation": "\(result.generation)",
            ])
        logger.info(
            "fix accepted",
            metadata: [
                "mode": "\(fix.mode.rawValue)",
                "time_to_fix_ms": "\(Int(fix.timeToFixMilliseconds ?? 0))", "source": "\(result.source.rawValue)",
                "generation": "\(result.generation)",
            ])
    }
}
