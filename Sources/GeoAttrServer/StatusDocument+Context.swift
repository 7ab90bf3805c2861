import GeoAttrCore
import GeoAttrModel

/// The status as the daemon knows it, cut to what the client may see.
extension StatusDocument {
    init(_ context: ServerContext, grant: Grant) {
        let status = context.store.status
        let served = context.store.served
        self.init(
            state: status.powerState.rawValue,
            fixInFlight: status.fixInFlight,
            lastAttempt: status.lastAttempt.map { attempt in
                Attempt(
                    trigger: attempt.trigger.rawValue, startedAt: attempt.startedAt.iso8601, endedAt: attempt.endedAt.iso8601,
                    failure: attempt.error.map { ($0.code, $0.description) }, fallback: attempt.fallback)
            },
            nextFixAt: status.nextFixAt?.iso8601,
            refreshTokens: status.refreshTokens,
            refreshesAccepted: status.refreshesAccepted,
            refreshesRefused: status.refreshesRefused,
            gpsdReachable: status.gpsdReachable,
            indexVersion: status.indexVersion,
            indexProblem: status.indexProblem,
            degraded: status.degraded,
            cacheAgeS: served?.age().components.seconds,
            generation: served?.result.generation,
            precision: grant.level.rawValue)
    }
}
