public import GeoAttrModel
public import Logging
import Synchronization

/// Writes results to the cache store off the concurrency pool, one at a time and newest wins:
/// a result superseded while an earlier write is still syncing is never written after it.
public final class CacheWriter: Sendable {
    private struct State {
        var pending: LocationResultBox?
        var writing = false
    }

    private struct LocationResultBox: Sendable {
        var result: LocationResult
    }

    private let store: any CacheStore
    private let logger: Logger
    private let state = Mutex(State())

    public init(store: any CacheStore, logger: Logger) {
        self.store = store
        self.logger = logger
    }

    /// Queues `result`; returns at once.
    public func submit(_ result: LocationResult) {
        let start = state.withLock { state in
            state.pending = LocationResultBox(result: result)
            if state.writing { return false }
            state.writing = true
            return true
        }
        guard start else { return }
        let started = DedicatedThread.start { [self] in drain() }
        if !started {
            state.withLock { $0.writing = false }
            logger.error("cache write skipped: the system refused a thread; the next fix retries")
        }
    }

    private func drain() {
        while let next = state.withLock({ state -> LocationResultBox? in
            guard let pending = state.pending else {
                state.writing = false
                return nil
            }
            state.pending = nil
            return pending
        }) {
            do {
                try store.save(next.result)
                logger.debug("cache written", metadata: ["generation": "\(next.result.generation)"])
            } catch {
                logger.warning("\(error); the in-memory result keeps being served and the next fix retries the write")
            }
        }
    }
}

