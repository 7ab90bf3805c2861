import GeoAttrModel
import Logging

/// The result persisted by the last run, as the scheduler serves it at start.
enum CachedResult {
    /// The persisted result, served at once if younger than `expireAfter`.
    static func restore(from cache: (any CacheStore)?, configuration: ScheduleConfiguration, logger: Logger) -> ServedResult? {
        guard let cache else { return nil }
        let stored: LocationResult?
        do {
            stored = try cache.load()
        } catch {
            logger.error("\(error); a new one is written at the next fix")
            return nil
        }
        guard var result = stored else {
            logger.info("no cached result yet")
            return nil
        }
        let wallAge = UTCTimestamp.now().seconds - result.updatedAt.seconds
        // A cache from the future means the clock was stepped back: its age is unknown, so it
        // is served but refreshed at once, as if exactly one TTL old.
        let age: Duration = wallAge >= 0 ? .seconds(wallAge) : configuration.ttl
        guard age < configuration.expireAfter else {
            logger.notice("cached result too old to serve", metadata: ["age_s": "\(wallAge)"])
            return nil
        }
        result.source = .cache
        logger.info(
            "serving the cached result",
            metadata: [
                "age_s": "\(age.components.seconds)", "stale": "\(age >= configuration.ttl)",
                "generation": "\(result.generation)",
            ])
        logger.debug("cached position", metadata: ["lat": "\(result.fix.latitude)", "lon": "\(result.fix.longitude)"])
        return ServedResult(result: result, obtainedAt: .now - age)
    }
}
