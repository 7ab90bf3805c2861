import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads a pipe on a thread of its own and keeps every line with the monotonic time it arrived,
/// so tests can wait for a line instead of sleeping, and time events as another process saw them.
public final class LineRecorder: Sendable {
    public struct Line: Sendable {
        public var text: String
        /// CLOCK_MONOTONIC nanoseconds at arrival.
        public var nanoseconds: Int64
        /// Position in the recording.
        public var index: Int = 0
    }

    private final class Store: Sendable {
        let lines = Mutex<[Line]>([])
        let ended = Mutex(false)
        func append(_ line: Line) {
            lines.withLock { lines in
                var numbered = line
                numbered.index = lines.count
                lines.append(numbered)
            }
        }
    }

    private let store = Store()
    /// The write end, to hand to a child process; close it in the parent after spawning.
    public let writeFD: Int32
    private let readFD: Int32

    public init() throws {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { throw ChildProcess.SpawnError(description: "pipe failed") }
        readFD = fds[0]
        writeFD = fds[1]
        _ = fcntl(readFD, F_SETFD, FD_CLOEXEC)
        let thread = Thread { [readFD, store] in
            var pending = [UInt8]()
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let n = read(readFD, &buffer, buffer.count)
                if n < 0, errno == EINTR { continue }
                if n <= 0 { break }
                let now = Self.monotonicNanoseconds()
                pending.append(contentsOf: buffer[0..<n])
                while let newline = pending.firstIndex(of: 10) {
                    let text = String(decoding: pending[..<newline], as: UTF8.self)
                    pending.removeSubrange(...newline)
                    store.append(Line(text: text, nanoseconds: now))
                }
            }
            if !pending.isEmpty {
                let text = String(decoding: pending, as: UTF8.self)
                store.append(Line(text: text, nanoseconds: Self.monotonicNanoseconds()))
            }
            close(readFD)
            store.ended.withLock { $0 = true }
        }
        thread.start()
    }

    /// Closes the parent's copy of the write end, so the reader ends with the child.
    public func closeWriteEnd() {
        close(writeFD)
    }

    public var all: [Line] { store.lines.withLock { $0 } }

    public var text: String { all.map(\.text).joined(separator: "\n") }

    /// Whether every writer has closed the pipe: no line is on its way any more.
    public var hasEnded: Bool { store.ended.withLock { $0 } }

    /// Waits until a line at or after `start` satisfies `predicate`; returns the first such
    /// line, or `nil` after `timeout`.
    public func waitForLine(from start: Int = 0, timeout: Duration = .seconds(20 * TestTiming.scale), where predicate: (String) -> Bool) async -> Line? {
        var found: Line?
        _ = await eventually(timeout: timeout) {
            found = all.dropFirst(start).first { predicate($0.text) }
            return found != nil
        }
        return found
    }

    public static func monotonicNanoseconds() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    }
}
