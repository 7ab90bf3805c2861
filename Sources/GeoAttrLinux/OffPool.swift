/// Runs blocking work (file I/O with fsync, inotify reads) on a dedicated thread and awaits it,
/// so no blocking call ever runs on the Swift concurrency pool. `nil` if no thread could start.
public func offPool<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T? {
    await withCheckedContinuation { (continuation: CheckedContinuation<T?, Never>) in
        let started = DedicatedThread.start { continuation.resume(returning: body()) }
        if !started { continuation.resume(returning: nil) }
    }
}
