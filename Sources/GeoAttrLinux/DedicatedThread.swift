public import GeoAttrCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs blocking work on a thread of its own, never on the Swift concurrency pool.
///
/// One fix an hour does not justify a pool; a detached pthread per attempt costs microseconds.
package enum DedicatedThread {
    private final class Work {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }

    /// Starts `body` on a new detached thread. Returns `false` if the system refused a thread.
    package static func start(_ body: @escaping @Sendable () -> Void) -> Bool {
        let work = Unmanaged.passRetained(Work(body)).toOpaque()
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        var thread = pthread_t()
        let rc = pthread_create(
            &thread, &attributes,
            { argument in
                guard let argument else { return nil }
                Unmanaged<Work>.fromOpaque(argument).takeRetainedValue().body()
                return nil
            }, work)
        guard rc == 0 else {
            Unmanaged<Work>.fromOpaque(work).release()
            return false
        }
        return true
    }
}

/// The core's blocking work (cache writes) on a detached thread per piece of work.
public struct DedicatedThreadStarter: BlockingWorkStarter {
    public init() {}

    public func start(_ body: @escaping @Sendable () -> Void) -> Bool {
        DedicatedThread.start(body)
    }
}
