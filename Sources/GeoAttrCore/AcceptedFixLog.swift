import GeoAttrModel
import Logging

extension Scheduler {
    /// What the journal says of a new result. The journal is readable by more people than the
    /// socket's exact level: coordinates only at debug.
    static func logAccepted(_ fix: Fix, result: LocationResult, decision: PlacePolicy.Decision, logger: Logger) {
        logger.debug("fix position", metadata: ["lat": "\(fix.latitude)", "lon": "\(fix.longitude)", "generation": "\(result.generation)"])
        logger.info(
            "fix accepted",
            metadata: [
                "mode": "\(fix.mode.rawValue)",
                "error_m": "\(fix.horizontalErrorMeters.map { "\($0)" } ?? "unknown")",
                "time_to_fix_ms": "\(Int(fix.timeToFixMilliseconds ?? 0))", "source": "\(result.source.rawValue)",
                "place": "\(decision.rawValue)", "generation": "\(result.generation)",
            ])
    }
}
