/// A token bucket that bounds forced refreshes (`SIGUSR1`, `POST /v1/refresh`): a battery
/// budget like the push-location anchor's ~360 a day. A refused request is never queued.
public struct RefreshBudget: Sendable, Hashable {
    public let burst: Int
    public let refillInterval: Duration
    private var tokens: Int
    private var lastRefill: ContinuousClock.Instant

    public init(burst: Int, refillInterval: Duration, now: ContinuousClock.Instant) {
        self.burst = max(0, burst)
        self.refillInterval = refillInterval
        self.tokens = max(0, burst)
        self.lastRefill = now
    }

    /// Tokens available at `now`.
    public mutating func available(at now: ContinuousClock.Instant) -> Int {
        refill(now)
        return tokens
    }

    /// Takes a token if one is available.
    public mutating func take(at now: ContinuousClock.Instant) -> Bool {
        refill(now)
        guard tokens > 0 else { return false }
        tokens -= 1
        return true
    }

    /// How long until the next token, `.zero` if one is available now.
    public mutating func retryAfter(at now: ContinuousClock.Instant) -> Duration {
        refill(now)
        guard tokens == 0 else { return .zero }
        return max(.zero, lastRefill + refillInterval - now)
    }

    /// Keeps the tokens when the configuration changes; more than the new burst are dropped.
    public func reconfigured(burst: Int, refillInterval: Duration, now: ContinuousClock.Instant) -> RefreshBudget {
        var copy = RefreshBudget(burst: burst, refillInterval: refillInterval, now: now)
        var current = self
        copy.tokens = min(copy.burst, current.available(at: now))
        return copy
    }

    private mutating func refill(_ now: ContinuousClock.Instant) {
        guard refillInterval > .zero else {
            tokens = burst
            lastRefill = now
            return
        }
        if tokens >= burst {
            lastRefill = now
            return
        }
        let elapsed = now - lastRefill
        guard elapsed >= refillInterval else { return }
        let earned = Int(elapsed / refillInterval)
        tokens = min(burst, tokens + earned)
        lastRefill = tokens >= burst ? now : lastRefill + refillInterval * earned
    }
}
