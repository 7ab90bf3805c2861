/// Where the core's blocking work runs (a cache write with its fsync): never on the Swift
/// concurrency pool, whose few threads answer every client. The platform adapter provides it
/// (a thread of its own per write), so the core itself starts no thread.
public protocol BlockingWorkStarter: Sendable {
    /// Starts `body` away from the pool and returns at once; `false` when the system refused.
    func start(_ body: @escaping @Sendable () -> Void) -> Bool
}
