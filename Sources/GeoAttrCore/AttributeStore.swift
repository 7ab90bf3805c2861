public import GeoAttrModel
import Synchronization

/// A result as served: the result and when it was obtained on the monotonic clock, so its age
/// is right even when the system clock is stepped.
public struct ServedResult: Sendable, Hashable {
    public var result: LocationResult
    public var obtainedAt: ContinuousClock.Instant

    public init(result: LocationResult, obtainedAt: ContinuousClock.Instant) {
        self.result = result
        self.obtainedAt = obtainedAt
    }

    public func age(at now: ContinuousClock.Instant = .now) -> Duration {
        max(.zero, now - obtainedAt)
    }
}

/// Which result is served, by its generation, and when it was obtained.
public typealias ServedMark = (generation: UInt64, obtainedAt: ContinuousClock.Instant)

/// The one interface between the scheduler and the servers: the current result and status,
/// and a stream of changes. Its writers are the scheduler (the result and its part of the
/// status), the index's reloader and the configuration reload; the API server gets its
/// `reader` and never writes.
public final class AttributeStore: Sendable {
    private struct State {
        var served: ServedResult?
        var status: DaemonStatus
        var subscribers: [Int: AsyncStream<ServedResult?>.Continuation] = [:]
        var powerSubscribers: [Int: AsyncStream<PowerState>.Continuation] = [:]
        var nextSubscriber = 0
    }

    private let state: Mutex<State>

    public init(powerState: PowerState) {
        state = Mutex(State(status: DaemonStatus(powerState: powerState)))
    }

    public var served: ServedResult? { state.withLock { $0.served } }
    public var status: DaemonStatus { state.withLock { $0.status } }
    public var powerState: PowerState { state.withLock { $0.status.scheduler.powerState } }

    /// The served result and the power state, read together (one lock: the API's hot path).
    public var servedAndPowerState: (served: ServedResult?, powerState: PowerState) {
        state.withLock { ($0.served, $0.status.scheduler.powerState) }
    }

    /// Which result is served (its generation) and since when, with the power state: what an
    /// answer made before is looked up by, read without copying the result.
    public var servedMarkAndPowerState: (served: ServedMark?, powerState: PowerState) {
        state.withLock { state in
            // The two fields read in place: the result itself is neither copied nor retained.
            let powerState = state.status.scheduler.powerState
            guard let generation = state.served?.result.generation, let obtainedAt = state.served?.obtainedAt else {
                return (nil, powerState)
            }
            return ((generation, obtainedAt), powerState)
        }
    }

    /// Replaces the served result in one step and notifies the subscribers.
    /// `status`: the scheduler's status changes that go with the result (the attempt that made
    /// it), made in the same step, so that no reader sees the new result with the previous
    /// attempt's record.
    public func publish(_ served: ServedResult, status change: ((inout SchedulerStatus) -> Void)? = nil) {
        let (subscribers, powerChanged, powerSubscribers) = state.withLock { state in
            state.served = served
            let power = change.flatMap { change in Self.change(&state, change) }
            return (Array(state.subscribers.values), power, power == nil ? [] : Array(state.powerSubscribers.values))
        }
        for subscriber in subscribers { subscriber.yield(served) }
        if let powerChanged {
            for subscriber in powerSubscribers { subscriber.yield(powerChanged) }
        }
    }

    /// Stops serving (the result expired).
    public func withdraw() {
        let subscribers = state.withLock { state in
            state.served = nil
            return Array(state.subscribers.values)
        }
        for subscriber in subscribers { subscriber.yield(nil) }
    }

    /// The scheduler's part of the status: the scheduler is its one writer.
    public func updateSchedulerStatus(_ change: (inout SchedulerStatus) -> Void) {
        let (changed, subscribers) = state.withLock { state -> (PowerState?, [AsyncStream<PowerState>.Continuation]) in
            guard let changed = Self.change(&state, change) else { return (nil, []) }
            return (changed, Array(state.powerSubscribers.values))
        }
        if let changed {
            for subscriber in subscribers { subscriber.yield(changed) }
        }
    }

    /// Applies a change of the scheduler's status; returns the new power state if it changed.
    private static func change(_ state: inout State, _ change: (inout SchedulerStatus) -> Void) -> PowerState? {
        let before = state.status.scheduler.powerState
        change(&state.status.scheduler)
        let after = state.status.scheduler.powerState
        return before == after ? nil : after
    }

    /// The index in service and the last refusal: the index's reloader is its one writer.
    public func publishIndexState(_ index: IndexState) {
        state.withLock { $0.status.index = index }
    }

    /// Why the last configuration reload was refused, `nil` once one is applied: the reload is
    /// its one writer.
    public func publishReloadRefusal(_ reason: String?) {
        state.withLock { $0.status.reloadRefused = reason }
    }

    /// Every change of the power state (foreground/background), for status reporting.
    public func powerStateChanges() -> AsyncStream<PowerState> {
        let (stream, continuation) = AsyncStream.makeStream(of: PowerState.self, bufferingPolicy: .bufferingNewest(1))
        let id = state.withLock { state in
            let id = state.nextSubscriber
            state.nextSubscriber += 1
            state.powerSubscribers[id] = continuation
            return id
        }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { _ = $0.powerSubscribers.removeValue(forKey: id) }
        }
        return stream
    }

    /// The current result at once, then every change. Slow consumers see only the newest.
    public func updates() -> AsyncStream<ServedResult?> {
        let (stream, continuation) = AsyncStream.makeStream(of: ServedResult?.self, bufferingPolicy: .bufferingNewest(1))
        let id = state.withLock { state in
            let id = state.nextSubscriber
            state.nextSubscriber += 1
            state.subscribers[id] = continuation
            continuation.yield(state.served)
            return id
        }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { _ = $0.subscribers.removeValue(forKey: id) }
        }
        return stream
    }

    /// How many `updates()` streams are open (watch clients, file outputs, systemd status): a
    /// client that vanished must not leave one behind.
    public var updateSubscriberCount: Int { state.withLock { $0.subscribers.count } }

    /// Ends every update stream (graceful shutdown).
    public func finish() {
        let (subscribers, powerSubscribers) = state.withLock { state in
            defer {
                state.subscribers = [:]
                state.powerSubscribers = [:]
            }
            return (Array(state.subscribers.values), Array(state.powerSubscribers.values))
        }
        for subscriber in subscribers { subscriber.finish() }
        for subscriber in powerSubscribers { subscriber.finish() }
    }
}
