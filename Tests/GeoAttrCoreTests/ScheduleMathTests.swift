import GeoAttrCore
import Testing

@Suite("RefreshBudget")
struct RefreshBudgetTests {
    let start = ContinuousClock.now

    // #expect cannot call mutating members; these take the budget inout.
    func take(_ budget: inout RefreshBudget, at now: ContinuousClock.Instant) -> Bool { budget.take(at: now) }
    func available(_ budget: inout RefreshBudget, at now: ContinuousClock.Instant) -> Int { budget.available(at: now) }
    func retryAfter(_ budget: inout RefreshBudget, at now: ContinuousClock.Instant) -> Duration { budget.retryAfter(at: now) }

    @Test func burstThenRefusedThenOneTokenPerInterval() {
        var budget = RefreshBudget(burst: 3, refillInterval: .seconds(600), now: start)
        #expect(take(&budget, at: start))
        #expect(take(&budget, at: start))
        #expect(take(&budget, at: start))
        #expect(!take(&budget, at: start))
        #expect(retryAfter(&budget, at: start + .seconds(100)) == .seconds(500))
        #expect(!take(&budget, at: start + .seconds(599)))
        #expect(take(&budget, at: start + .seconds(600)))
        #expect(!take(&budget, at: start + .seconds(601)))
        #expect(available(&budget, at: start + .seconds(3000)) == 3)
    }

    @Test func neverMoreThanTheBurst() {
        var budget = RefreshBudget(burst: 2, refillInterval: .seconds(1), now: start)
        #expect(available(&budget, at: start + .seconds(3600)) == 2)
    }

    @Test func reconfiguringKeepsSpentTokensSpent() {
        var budget = RefreshBudget(burst: 6, refillInterval: .seconds(600), now: start)
        for _ in 0..<5 { _ = budget.take(at: start) }
        var smaller = budget.reconfigured(burst: 3, refillInterval: .seconds(60), now: start)
        #expect(available(&smaller, at: start) == 1)
        // A larger burst grants its new tokens: 1 left, 4 more.
        var larger = budget.reconfigured(burst: 10, refillInterval: .seconds(600), now: start)
        #expect(available(&larger, at: start) == 5)
    }

    @Test("raising refresh.burst is the way out of a spent budget")
    func raisingTheBurstGrantsTokensNow() {
        var budget = RefreshBudget(burst: 6, refillInterval: .seconds(600), now: start)
        for _ in 0..<6 { _ = budget.take(at: start) }
        #expect(!take(&budget, at: start + .seconds(7)))
        var raised = budget.reconfigured(burst: 10, refillInterval: .seconds(600), now: start + .seconds(7))
        #expect(available(&raised, at: start + .seconds(7)) == 4)
    }

    @Test("a reload never lengthens the wait for the next token, whatever the new interval")
    func reloadKeepsTheCountdown() {
        var budget = RefreshBudget(burst: 6, refillInterval: .seconds(600), now: start)
        for _ in 0..<6 { _ = budget.take(at: start) }
        let now = start + .seconds(7)
        #expect(retryAfter(&budget, at: now) == .seconds(593))
        var same = budget.reconfigured(burst: 6, refillInterval: .seconds(600), now: now)
        #expect(retryAfter(&same, at: now) == .seconds(593))
        var shorter = budget.reconfigured(burst: 6, refillInterval: .seconds(60), now: now)
        #expect(retryAfter(&shorter, at: now) == .seconds(53))
        var longer = budget.reconfigured(burst: 6, refillInterval: .seconds(1200), now: now)
        #expect(retryAfter(&longer, at: now) == .seconds(593))
        // Then the new interval.
        #expect(take(&longer, at: start + .seconds(600)))
        #expect(!take(&longer, at: start + .seconds(1799)))
        #expect(take(&longer, at: start + .seconds(1800)))
    }

    @Test func zeroBurstRefusesEverything() {
        var budget = RefreshBudget(burst: 0, refillInterval: .seconds(1), now: start)
        #expect(!take(&budget, at: start + .seconds(10)))
    }
}

@Suite("RetryBackoff")
struct RetryBackoffTests {
    @Test func growsExponentiallyUpToTheCap() {
        let backoff = RetryBackoff(initial: .seconds(30), maximum: .seconds(1800))
        #expect(backoff.delay(afterFailures: 1, unit: 1) == .seconds(30))
        #expect(backoff.delay(afterFailures: 2, unit: 1) == .seconds(60))
        #expect(backoff.delay(afterFailures: 3, unit: 1) == .seconds(120))
        #expect(backoff.delay(afterFailures: 7, unit: 1) == .seconds(1800))
        #expect(backoff.delay(afterFailures: 70, unit: 1) == .seconds(1800))
    }

    @Test func jitterUsesTheUpperHalf() {
        let backoff = RetryBackoff(initial: .seconds(30), maximum: .seconds(1800))
        #expect(backoff.delay(afterFailures: 2, unit: 0) == .seconds(30))
        #expect(backoff.delay(afterFailures: 2, unit: 0.5) == .seconds(45))
        #expect(backoff.delay(afterFailures: 0, unit: 0.5) == .zero)
    }
}
