import GeoAttrCore
import GeoAttrModel
import NIOCore

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
