import GeoAttrCore
import Synchronization
import Testing
import TestSupport

@Suite("DrainWaiters")
struct DrainWaitersTests {
    @Test func aWaitOnWhatHasDrainedReturnsAtOnce() async {
        let waiters = DrainWaiters()
        let start = ContinuousClock.now
        await waiters.wait(atMost: .seconds(60)) { true }
        #expect(ContinuousClock.now - start < .seconds(30))
    }

    @Test func aWaitReturnsWhenWokenAfterTheDrain() async {
        let waiters = DrainWaiters()
        let left = Mutex(1)
        let start = ContinuousClock.now
        async let waited: Void = waiters.wait(atMost: .seconds(60)) { left.withLock { $0 } == 0 }
        #expect(await eventually { waiters.waitingCount == 1 })
        left.withLock { $0 = 0 }
        waiters.wakeAll()
        await waited
        #expect(ContinuousClock.now - start < .seconds(30))
    }

    @Test func aWaitEndsAtItsTimeoutWhenNothingDrains() async {
        let waiters = DrainWaiters()
        let start = ContinuousClock.now
        await waiters.wait(atMost: .milliseconds(50)) { false }
        #expect(ContinuousClock.now - start >= .milliseconds(50))
        // A wake after the waiter gave up finds nobody.
        waiters.wakeAll()
    }

    @Test func aCancelledWaitReturns() async {
        let waiters = DrainWaiters()
        let task = Task { await waiters.wait(atMost: .seconds(60)) { false } }
        #expect(await eventually { waiters.waitingCount == 1 })
        let start = ContinuousClock.now
        task.cancel()
        await task.value
        #expect(ContinuousClock.now - start < .seconds(30))
    }
}
