#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// A pipe that ends a blocking poll on another thread: cancellation of a fix attempt, the end
/// of a file watch. Firing after `close()` is harmless (the descriptors are never reused under
/// a writer's feet).
package final class WakePipe: Sendable {
    private struct Ends {
        var read: Int32
        var write: Int32
    }

    private let ends: Mutex<Ends>

    /// `nil` when the system has no descriptors to spare.
    package init?() {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { return nil }
        for fd in fds {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        }
        ends = Mutex(Ends(read: fds[0], write: fds[1]))
    }

    /// The descriptor to poll; valid until `close()`.
    package var readFD: Int32 { ends.withLock { $0.read } }

    /// Makes `readFD` readable.
    package func fire() {
        ends.withLock { ends in
            guard ends.write >= 0 else { return }
            var byte: UInt8 = 1
            _ = write(ends.write, &byte, 1)
        }
    }

    package func close() {
        ends.withLock { ends in
            if ends.read >= 0 { _ = Glibc.close(ends.read) }
            if ends.write >= 0 { _ = Glibc.close(ends.write) }
            ends = Ends(read: -1, write: -1)
        }
    }

    deinit {
        close()
    }
}
