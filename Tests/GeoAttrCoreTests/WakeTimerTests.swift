import GeoAttrCore
import Testing

/// The scheduler re-arms its wake-up on every event. A cancelled Task.sleep holds memory until
/// its deadline, so re-arming must reuse sleepers instead of starting (and cancelling) one each
/// time: the soak benchmark's memory depends on it.
@Suite("WakeTimer")
struct WakeTimerTests {
    let now = ContinuousClock.now

    /// Arms without real sleeping tasks: each sleeper is a task that returns at once, recorded.
    final class Started {
        var instants: [ContinuousClock.Instant] = []
    }

    func arm(_ timer: inout WakeTimer, at instant: ContinuousClock.Instant, _ started: Started) {
        timer.arm(at: instant) { _, wakesAt in
            started.instants.append(wakesAt)
            return Task {}
        }
    }

    @Test("re-arming between two instants 10,000 times (a flapping state) keeps two sleepers")
    func flappingReusesSleepers() {
        var timer = WakeTimer()
        let started = Started()
        let ttlDue = now + .seconds(3600), expiry = now + .seconds(86_400)
        for flip in 0..<10_000 {
            timer.disarm()
            arm(&timer, at: flip.isMultiple(of: 2) ? expiry : ttlDue, started)
        }
        #expect(started.instants == [expiry, ttlDue])
        #expect(timer.sleepersInFlight == 2)
        #expect(timer.deadline == ttlDue)
    }

    @Test("a later deadline waits for the earlier sleeper; an earlier one starts a new sleeper")
    func laterAndEarlier() {
        var timer = WakeTimer()
        let started = Started()
        arm(&timer, at: now + .seconds(10), started)
        arm(&timer, at: now + .seconds(20), started)
        #expect(started.instants.count == 1, "a later deadline must not start a sleeper while an earlier one is in flight")
        arm(&timer, at: now + .seconds(5), started)
        #expect(started.instants == [now + .seconds(10), now + .seconds(5)])
        // The first sleeper wakes; the owner re-arms for the deadline it still wants.
        timer.sleeperWoke(2)
        arm(&timer, at: now + .seconds(20), started)
        #expect(started.instants.count == 2, "the sleeper for +10 s is still in flight and wakes first")
        timer.sleeperWoke(1)
        arm(&timer, at: now + .seconds(20), started)
        #expect(started.instants.last == now + .seconds(20))
        #expect(timer.sleepersInFlight == 1)
        timer.cancelAll()
        #expect(timer.sleepersInFlight == 0)
        #expect(timer.deadline == nil)
    }
}
