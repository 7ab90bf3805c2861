import GeoAttrCore
import GeoAttrModel
import NIOCore

/// `GET /v1/status`. Location data in it is cut to the client's grant like everywhere else.
struct StatusDocument: Encodable {
    struct Attempt: Encodable {
        var trigger: String
        var startedAt: String
        var endedAt: String
        var result: String
        var error: String?
        /// On success: whether the fix was a fallback.
        var fallback: Bool?

        enum CodingKeys: String, CodingKey {
            case trigger, result, error, fallback
            case startedAt = "started_at", endedAt = "ended_at"
        }
    }

    var state: String
    var fixInFlight: Bool
    var lastAttempt: Attempt?
    var nextFixAt: String?
    var refreshTokens: Int
    var refreshesAccepted: Int
    var refreshesRefused: Int
    var gpsdReachable: Bool?
    var indexVersion: String?
    var indexProblem: String?
    var degraded: [String]
    var cacheAgeS: Int64?
    var generation: UInt64?
    var precision: String

    enum CodingKeys: String, CodingKey {
        case state, degraded, generation, precision
        case fixInFlight = "fix_in_flight", lastAttempt = "last_attempt", nextFixAt = "next_fix_at"
        case refreshTokens = "refresh_tokens", refreshesAccepted = "refreshes_accepted", refreshesRefused = "refreshes_refused"
        case gpsdReachable = "gpsd_reachable", indexVersion = "index_version", cacheAgeS = "cache_age_s"
        case indexProblem = "index_problem"
    }

    init(_ context: ServerContext, grant: Grant) {
        let status = context.store.status
        state = status.powerState.rawValue
        fixInFlight = status.fixInFlight
        lastAttempt = status.lastAttempt.map { attempt in
            Attempt(
                trigger: attempt.trigger.rawValue, startedAt: attempt.startedAt.iso8601, endedAt: attempt.endedAt.iso8601,
                result: attempt.error?.code ?? "fix", error: attempt.error?.description,
                fallback: attempt.error == nil ? attempt.fallback : nil)
        }
        nextFixAt = status.nextFixAt?.iso8601
        refreshTokens = status.refreshTokens
        refreshesAccepted = status.refreshesAccepted
        refreshesRefused = status.refreshesRefused
        gpsdReachable = status.gpsdReachable
        indexVersion = status.indexVersion
        indexProblem = status.indexProblem
        degraded = status.degraded
        let served = context.store.served
        cacheAgeS = served?.age().components.seconds
        generation = served?.result.generation
        precision = grant.level.rawValue
    }
}

/// `POST /v1/refresh` without `wait`, or when the wait ended first.
struct RefreshDocument: Encodable {
    var refresh: String
    var stillRunning: Bool?

    enum CodingKeys: String, CodingKey {
        case refresh
        case stillRunning = "still_running"
    }

    init(outcome: Scheduler.RefreshOutcome, stillRunning: Bool? = nil) {
        switch outcome {
        case .started: refresh = "started"
        case .joined: refresh = "joined"
        case .refused: refresh = "refused"
        }
        self.stillRunning = stillRunning
    }
}

/// What the scheduler said to a refresh request, and, when asked to wait, how the fix ended
/// (`nil` result: the wait ended first).
struct RefreshAnswer: Sendable {
    var outcome: Scheduler.RefreshOutcome
    var result: Result<LocationResult, FixError>?

    static func obtain(
        scheduler: any SchedulerCommands, origin: String, wait: Duration?, timer: any EventLoop, waits: RefreshWaits
    ) async -> RefreshAnswer {
        let (stream, continuation) = AsyncStream.makeStream(of: Result<LocationResult, FixError>.self)
        // Registered so that shutdown can end the wait at once.
        let id = waits.begin(continuation)
        defer { waits.end(id) }
        guard let wait else {
            return RefreshAnswer(outcome: await scheduler.requestRefresh(origin: origin, completion: nil), result: nil)
        }
        let outcome = await scheduler.requestRefresh(origin: origin) { result in
            continuation.yield(result)
            continuation.finish()
        }
        if case .refused = outcome { return RefreshAnswer(outcome: outcome, result: nil) }
        // The wait ends on the event loop, not in a sleeping task: a cancelled Task.sleep holds
        // its memory until its deadline (swiftlang/swift#60441), a cancelled scheduled task not.
        let timeout = timer.scheduleTask(in: TimeAmount(wait)) { continuation.finish() }
        var result: Result<LocationResult, FixError>?
        for await first in stream {
            result = first
            break
        }
        timeout.cancel()
        continuation.finish()
        return RefreshAnswer(outcome: outcome, result: result)
    }
}
