import GeoAttrCore
import GeoAttrModel
import Synchronization

/// The `POST /v1/refresh?wait=` requests in progress, so that shutdown can end their waits at
/// once and let them finish on an event loop that still runs.
final class RefreshWaits: Sendable {
    private struct State {
        var waits: [Int: AsyncStream<Result<LocationResult, FixError>>.Continuation] = [:]
        var next = 0
        var finished = false
        /// Requests from their start until their answer is handed to the event loop.
        var requests = 0
    }

    private let state = Mutex(State())
    /// Shutdown, waiting for the last request's answer.
    private let drain = DrainWaiters()

    /// Registers a wait; ends at once when shutdown has begun.
    func begin(_ continuation: AsyncStream<Result<LocationResult, FixError>>.Continuation) -> Int {
        let (id, finished) = state.withLock { state in
            defer { state.next += 1 }
            if !state.finished { state.waits[state.next] = continuation }
            return (state.next, state.finished)
        }
        if finished { continuation.finish() }
        return id
    }

    func end(_ id: Int) {
        _ = state.withLock { $0.waits.removeValue(forKey: id) }
    }

    func requestStarted() { state.withLock { $0.requests += 1 } }

    /// Called on the event loop once the request's answer is written (or given up).
    func requestEnded() {
        let none = state.withLock { state in
            state.requests -= 1
            return state.requests == 0
        }
        if none { drain.wakeAll() }
    }

    var count: Int { state.withLock { $0.requests } }

    /// Ends every wait (their requests are answered as shutting down).
    func finishAll() {
        let waits = state.withLock { state in
            state.finished = true
            return Array(state.waits.values)
        }
        for wait in waits { wait.finish() }
    }

    /// Returns once no request is left, or after `timeout`.
    func waitUntilNone(timeout: Duration) async {
        await drain.wait(atMost: timeout) { self.count == 0 }
    }
}
