public import GeoAttrModel
public import Logging
import Synchronization

/// Writes results to the cache store off the concurrency pool, one at a time and newest wins:
/// a result superseded while an earlier write is still syncing is never written after it.
///
/// A failing write (read-only or full disk, directory removed) is logged as an error when it
/// starts failing and when its cause changes, then at most every `failureReminder` while it
/// lasts, not at every fix; the first write that succeeds again says how many failed.
public final class CacheWriter: Sendable {
    /// How often a write failure that goes on is logged again.
    public static let defaultFailureReminder: Duration = .seconds(600)

    private struct State {
        var pending: LocationResultBox?
        var writing = false
    }

    /// The run of failed writes in progress.
    private struct FailureRun {
        /// The system's error text ("Read-only file system"), whichever step of the write failed.
        var cause: String
        var failures: Int
        var lastLogged: ContinuousClock.Instant
    }

    private enum FailureReport {
        case started
        case reminder(failures: Int)
        case repeated(failures: Int)
    }

    private struct LocationResultBox: Sendable {
        var result: LocationResult
    }

    /// Where the result is persisted; the scheduler restores from it at start.
    public let store: any CacheStore
    private let blockingWork: any BlockingWorkStarter
    private let logger: Logger
    private let state = Mutex(State())
    /// Shutdown, waiting for the last write.
    private let lastWrite = DrainWaiters()
    private let failureRun = Mutex<FailureRun?>(nil)
    private let failureReminder: Duration

    public init(
        store: any CacheStore, blockingWork: any BlockingWorkStarter, logger: Logger,
        failureReminder: Duration = CacheWriter.defaultFailureReminder
    ) {
        self.store = store
        self.blockingWork = blockingWork
        self.logger = logger
        self.failureReminder = failureReminder
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
        let started = blockingWork.start { [self] in drain() }
        if !started {
            state.withLock { $0.writing = false }
            lastWrite.wakeAll()
            logger.error("cache write skipped: the system refused a thread; the next fix retries")
        }
    }

    /// Waits, at most `timeout`, until the result submitted last is written (or its write has
    /// failed): at shutdown, so that the process does not end in the middle of the last write.
    public func finishWriting(timeout: Duration) async {
        await lastWrite.wait(atMost: timeout) { !self.state.withLock { $0.writing } }
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
            do throws(CacheFileError) {
                try store.save(next.result)
                logger.debug("cache written", metadata: ["generation": "\(next.result.generation)"])
                if let ended = failureRun.withLock({ run in defer { run = nil }; return run }) {
                    logger.notice(
                        "cache written again after \(ended.failures) failed writes",
                        metadata: ["generation": "\(next.result.generation)"])
                }
            } catch {
                recordFailure(error)
            }
        }
        lastWrite.wakeAll()
    }

    private func recordFailure(_ error: CacheFileError) {
        let reason = error.description
        let cause = reason.split(separator: ": ").last.map(String.init) ?? reason
        let now = ContinuousClock.now
        let reminder = failureReminder
        let report = failureRun.withLock { run -> FailureReport in
            guard var current = run, current.cause == cause else {
                run = FailureRun(cause: cause, failures: (run?.failures ?? 0) + 1, lastLogged: now)
                return .started
            }
            current.failures += 1
            defer { run = current }
            guard now - current.lastLogged >= reminder else { return .repeated(failures: current.failures) }
            current.lastLogged = now
            return .reminder(failures: current.failures)
        }
        switch report {
        case .started:
            logger.error(
                "\(reason); the in-memory result keeps being served and every fix retries the write (this error is repeated at most every \(reminder.components.seconds) s while it lasts)")
        case .reminder(let failures):
            logger.error("\(reason); still failing, \(failures) failed writes so far; the in-memory result keeps being served")
        case .repeated(let failures):
            logger.debug("cache write failed again", metadata: ["failures": "\(failures)"])
        }
    }
}

