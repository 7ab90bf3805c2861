public import GeoAttrCore
import GeoAttrLinux
public import GeoAttrModel
public import Logging
import Synchronization
public import GeoAttrSettings

/// One-shot fixes from gpsd through libgps.
///
/// Each call connects, enables the watch, reads reports until one passes ``FixAcceptanceRules``
/// (or the attempt fails), then disables the watch and closes the connection at once. The
/// blocking libgps work runs on a dedicated thread that polls the gpsd socket; the calling task
/// only awaits. Cancelling it wakes that thread through a pipe it polls and releases gpsd.
public struct GPSDFixSource: FixSource {
    public var endpoint: GPSDEndpoint
    public var rules: FixAcceptanceRules
    public var logger: Logger
    /// What the receivers have shown about error estimates, kept across attempts.
    public var receivers: ReceiverMemory

    /// Slack past the rules' timeout before the caller stops waiting for a thread stuck in
    /// libgps's blocking connect (an unreachable remote host, a hanging resolver).
    static let abandonSlack: Duration = .seconds(3)

    public init(
        endpoint: GPSDEndpoint = .default,
        rules: FixAcceptanceRules = FixAcceptanceRules(),
        logger: Logger,
        receivers: ReceiverMemory = .process
    ) {
        self.endpoint = endpoint
        self.rules = rules
        self.logger = logger
        self.receivers = receivers
    }

    public func fix() async throws(FixError) -> Fix {
        if Task.isCancelled { throw .cancelled }
        guard let wake = WakePipe() else {
            throw .systemResources(reason: "no file descriptors for a wake pipe")
        }
        let session = GPSDSession(endpoint: endpoint, rules: rules, logger: logger, receivers: receivers)
        let outcome = PendingOutcome()
        let abandonAfter = rules.timeout + Self.abandonSlack
        let timeoutSeconds = rules.timeout.secondsValue

        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<Fix, FixError>, Never>) in
                outcome.install(continuation)
                let started = DedicatedThread.start {
                    outcome.resume(with: session.run(wake: wake))
                }
                guard started else {
                    outcome.resume(with: .failure(.systemResources(reason: "the system refused a thread")))
                    return
                }
                outcome.armWatchdog(after: abandonAfter) {
                    wake.fire()
                    return .failure(.timeout(timeoutSeconds: timeoutSeconds))
                }
            }
        } onCancel: {
            wake.fire()
        }
        return try result.get()
    }
}

/// Resumes one continuation exactly once: from the fix thread, or from a watchdog that gives up
/// on a thread stuck in a blocking connect.
private final class PendingOutcome: Sendable {
    private let state = Mutex<State>(State())

    private struct State {
        var continuation: CheckedContinuation<Result<Fix, FixError>, Never>?
        var watchdog: Task<Void, Never>?
    }

    func install(_ continuation: CheckedContinuation<Result<Fix, FixError>, Never>) {
        state.withLock { $0.continuation = continuation }
    }

    func resume(with result: Result<Fix, FixError>) {
        let (continuation, watchdog) = state.withLock { state in
            defer {
                state.continuation = nil
                state.watchdog = nil
            }
            return (state.continuation, state.watchdog)
        }
        watchdog?.cancel()
        continuation?.resume(returning: result)
    }

    func armWatchdog(after delay: Duration, _ giveUp: @escaping @Sendable () -> Result<Fix, FixError>) {
        let task = Task { [weak self] in
            do {
                try await Task.sleep(for: delay)
            } catch {
                return
            }
            self?.resume(with: giveUp())
        }
        let alreadyDone = state.withLock { state in
            guard state.continuation != nil else { return true }
            state.watchdog = task
            return false
        }
        if alreadyDone { task.cancel() }
    }
}
