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
        var larger = budget.reconfigured(burst: 10, refillInterval: .seconds(600), now: start)
        #expect(available(&larger, at: start) == 1)
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
