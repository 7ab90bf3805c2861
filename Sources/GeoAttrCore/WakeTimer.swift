/// The scheduler's one wake-up, re-armed on every event without holding memory.
///
/// A cancelled `Task.sleep` keeps its task and its runtime timer allocated until the deadline
/// it was sleeping for (swiftlang/swift#60441). The scheduler re-arms on every event, often for
/// the moment the served result expires (a day away by default): cancelling and re-sleeping
/// each time held about 750 bytes per fix or state change for a day, which the soak benchmark
/// saw as steady growth. So no sleeper is cancelled while the daemon runs. Re-arming for a later
/// instant keeps the sleeper that wakes first (its wake-up re-arms for the rest), and a new
/// sleeper starts only when none wakes early enough: the sleepers in flight stay a handful.
package struct WakeTimer {
    package typealias Instant = ContinuousClock.Instant

    /// The instant the owner wants to be woken at, `nil` when disarmed.
    package private(set) var deadline: Instant?
    private var sleepers: [Int: (wakesAt: Instant, task: Task<Void, Never>)] = [:]
    private var lastSleeperID = 0

    package init() {}

    /// How many sleepers are in flight (for tests: re-arming must not pile them up).
    package var sleepersInFlight: Int { sleepers.count }

    /// Wants a wake-up at `instant`. `startSleeper(id, instant)` must start a task that sleeps
    /// until `instant` and then reports `sleeperWoke(id)` to the owner.
    package mutating func arm(at instant: Instant, startSleeper: (Int, Instant) -> Task<Void, Never>) {
        deadline = instant
        if sleepers.values.contains(where: { $0.wakesAt <= instant }) { return }
        lastSleeperID += 1
        sleepers[lastSleeperID] = (instant, startSleeper(lastSleeperID, instant))
    }

    /// No wake-up wanted; sleepers in flight wake up to nothing.
    package mutating func disarm() {
        deadline = nil
    }

    /// A sleeper woke. The owner then re-evaluates and re-arms: an early or stale wake-up
    /// is harmless.
    package mutating func sleeperWoke(_ id: Int) {
        sleepers[id] = nil
    }

    /// At shutdown only: the sleepers are cancelled so that nothing outlives the owner's run.
    package mutating func cancelAll() {
        for sleeper in sleepers.values { sleeper.task.cancel() }
        sleepers = [:]
        deadline = nil
    }
}
