import GeoAttrCore
import GeoAttrModel

/// The status as the daemon knows it, cut to what the client may see.
extension StatusDocument {
    init(_ context: ServerContext, grant: Grant) {
        let status = context.store.status
        let scheduler = status.scheduler
        let served = context.store.served
        self.init(
            state: scheduler.powerState.rawValue,
            fixInFlight: scheduler.fixInFlight,
            lastAttempt: scheduler.lastAttempt.map { attempt in
                Attempt(
                    trigger: attempt.trigger.rawValue, startedAt: attempt.startedAt.iso8601, endedAt: attempt.endedAt.iso8601,
                    failure: attempt.error.map { ($0.code, $0.description) }, fallback: attempt.fallback)
            },
            nextFixAt: scheduler.nextFixAt?.iso8601,
            refreshTokens: scheduler.refreshTokens,
            refreshesAccepted: scheduler.refreshesAccepted,
            refreshesRefused: scheduler.refreshesRefused,
            gpsdReachable: scheduler.gpsdReachable,
            indexVersion: status.index.versionInService,
            indexProblem: status.index.refusal?.description,
            degraded: status.degraded,
            cacheAgeS: served?.age().components.seconds,
            generation: served?.result.generation,
            precision: grant.level.rawValue)
    }
}
