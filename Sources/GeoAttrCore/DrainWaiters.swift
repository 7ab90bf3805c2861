import Synchronization

/// Tasks waiting, each for at most a timeout, until something drains: the last connection
/// gone, the last waiting request answered, the last cache write done. The owner says when it
/// may have drained (`wakeAll`); a waiter checks the condition itself once it is registered,
/// so a drain between its check and its registration is not missed.
public final class DrainWaiters: Sendable {
    /// A waiter's entry, from the start of its wait until it is resumed. No entry: woken, or
    /// given up.
    private enum Waiter {
        /// Not registered yet.
        case starting
        case waiting(CheckedContinuation<Void, Never>)
        /// Given up (timed out or cancelled) before it was registered.
        case abandoned
    }

    private struct State {
        var waiters: [Int: Waiter] = [:]
        var next = 0
    }

    private let state = Mutex(State())

    public init() {}

    /// Waits registered and not yet woken: whoever drains can tell a waiter is there.
    public var waitingCount: Int {
        state.withLock { state in
            state.waiters.values.count { if case .waiting = $0 { true } else { false } }
        }
    }

    /// Returns once `drained` holds, after a `wakeAll`, or when `timeout` has passed or the task
    /// is cancelled, whichever comes first.
    public func wait(atMost timeout: Duration, until drained: @escaping @Sendable () -> Bool) async {
        guard !drained() else { return }
        let id = state.withLock { state in
            defer { state.next += 1 }
            state.waiters[state.next] = .starting
            return state.next
        }
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await withTaskCancellationHandler {
                    await withCheckedContinuation { continuation in
                        self.register(id, continuation)
                        if drained() { self.resume(id) }
                    }
                } onCancel: {
                    self.resume(id)
                }
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
            }
            await group.next()
            group.cancelAll()
        }
    }

    /// Wakes every waiter: called when the owner may have drained.
    public func wakeAll() {
        // A waiter not registered yet keeps its entry: it checks the condition once registered,
        // so a wake from an earlier drain (the last write before the one it waits for) does not
        // end its wait while the condition does not hold.
        let woken = state.withLock { state in
            var woken: [CheckedContinuation<Void, Never>] = []
            for case (let id, .waiting(let continuation)) in state.waiters {
                woken.append(continuation)
                state.waiters[id] = nil
            }
            return woken
        }
        for continuation in woken { continuation.resume() }
    }

    private func register(_ id: Int, _ continuation: CheckedContinuation<Void, Never>) {
        let waits = state.withLock { state in
            guard case .starting = state.waiters[id] else {
                state.waiters[id] = nil
                return false
            }
            state.waiters[id] = .waiting(continuation)
            return true
        }
        if !waits { continuation.resume() }
    }

    private func resume(_ id: Int) {
        let continuation = state.withLock { state -> CheckedContinuation<Void, Never>? in
            switch state.waiters[id] {
            case .waiting(let continuation):
                state.waiters[id] = nil
                return continuation
            case .starting:
                state.waiters[id] = .abandoned
                return nil
            case .abandoned, nil:
                return nil
            }
        }
        continuation?.resume()
    }
}
