/// Capped exponential backoff with jitter for failed scheduled fixes, so a fleet of devices that
/// lost gpsd together does not retry in lockstep.
public struct RetryBackoff: Sendable, Hashable {
    public var initial: Duration
    public var maximum: Duration

    public init(initial: Duration, maximum: Duration) {
        self.initial = initial
        self.maximum = max(initial, maximum)
    }

    /// The delay before retry number `failures` (1 after the first failure): the capped
    /// exponential value, of which a random upper half is used (`unit` in 0...1).
    public func delay(afterFailures failures: Int, unit: Double) -> Duration {
        guard failures > 0 else { return .zero }
        var ceiling = initial
        var step = 1
        while step < failures, ceiling < maximum {
            ceiling = ceiling * 2
            step += 1
        }
        ceiling = min(ceiling, maximum)
        let fraction = 0.5 + 0.5 * min(1, max(0, unit))
        return ceiling * fraction
    }
}
