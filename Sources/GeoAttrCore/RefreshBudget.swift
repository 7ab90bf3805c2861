/// A token bucket that bounds forced refreshes (`SIGUSR1`, `POST /v1/refresh`), so that no
/// client can spend the receiver's battery. A refused request is never queued.
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

    /// The budget under a reloaded configuration. A larger burst grants its new tokens at once
    /// (raising `refresh.burst` is the way out of a spent budget); a smaller one drops those over
    /// it. The next token comes no later than it would have: a reload never lengthens the wait.
    public func reconfigured(burst: Int, refillInterval: Duration, now: ContinuousClock.Instant) -> RefreshBudget {
        var current = self
        let tokens = current.available(at: now)
        var copy = RefreshBudget(burst: burst, refillInterval: refillInterval, now: now)
        copy.tokens = min(copy.burst, tokens + max(0, copy.burst - current.burst))
        guard copy.tokens < copy.burst else { return copy }
        // The anchor that puts the next token where the old interval put it, or sooner.
        let longer = max(.zero, copy.refillInterval - current.refillInterval)
        copy.lastRefill = current.lastRefill - longer
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
