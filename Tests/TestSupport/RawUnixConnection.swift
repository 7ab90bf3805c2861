import Foundation
import GeoAttrCore
import GeoAttrLinux

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A plain blocking Unix-socket connection, for clients that misbehave on purpose (malformed,
/// oversized, slow, vanishing) where an HTTP client library would refuse to.
public final class RawUnixConnection {
    public let fd: Int32

    public init(path: String) throws {
        // `self.fd` is set only on success: a class whose init throws once every stored property
        // is set runs its deinit, which would close the descriptor a second time, by then
        // perhaps another thread's (NIO then traps on EBADF).
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw ChildProcess.SpawnError(description: "socket failed") }
        let rc = UnixAddress.withAddress(path) { connect(fd, $0, $1) }
        guard rc == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw ChildProcess.SpawnError(description: "connect to \(path) failed: \(reason)")
        }
        self.fd = fd
    }

    /// Takes over a connected socket (closed with this object).
    public init(adopting fd: Int32) {
        self.fd = fd
    }

    /// Sends everything; `false` if the peer closed.
    @discardableResult
    public func send(_ text: String) -> Bool { send(Array(text.utf8)) }

    @discardableResult
    public func send(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress.map { $0 + offset }, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { return false }
            offset += n
        }
        return true
    }

    /// Waits until the socket reports one of `events` (`POLLOUT`, `POLLRDHUP`, ...) or `timeout`
    /// passes; the events reported (hang-up and errors always count), 0 on time-out. The wait
    /// runs on a thread of its own, never on a concurrency thread.
    public func wait(for events: Int32, timeout: Duration) async -> Int32 {
        let (fd, milliseconds) = (fd, Int32(clamping: timeout.nanosecondsValue / 1_000_000))
        let reported = await offPool { () -> Int32 in
            var pfd = pollfd(fd: fd, events: Int16(truncatingIfNeeded: events), revents: 0)
            while true {
                let ready = poll(&pfd, 1, milliseconds)
                if ready < 0, errno == EINTR { continue }
                return ready > 0 ? Int32(pfd.revents) : 0
            }
        }
        return reported ?? 0
    }

    /// Reads until the peer closes, `until` appears, or `timeout` passes. Waits as a task
    /// (never blocking a concurrency thread, which other tests' clients need).
    public func read(until marker: String? = nil, timeout: Duration = .seconds(10)) async -> (text: String, closed: Bool) {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            guard await wait(for: Int32(POLLIN), timeout: max(.zero, deadline - ContinuousClock.now)) != 0 else { continue }
            let n = recv(fd, &buffer, buffer.count, 0)
            if n <= 0 { return (String(decoding: received, as: UTF8.self), true) }
            received += buffer[0..<n]
            if let marker, String(decoding: received, as: UTF8.self).contains(marker) {
                return (String(decoding: received, as: UTF8.self), false)
            }
        }
        return (String(decoding: received, as: UTF8.self), false)
    }

    /// Reads until one whole response has arrived, the peer closed, or `timeout` passed: the
    /// response (`nil`: none came whole) and whether the peer closed. For a client that sends one
    /// request at a time.
    public func response(timeout: Duration = .seconds(10)) async -> (response: RawHTTPResponse?, closed: Bool) {
        var text = ""
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let (more, closed) = await read(timeout: .milliseconds(20))
            text += more
            if let whole = RawHTTPResponse.first(in: Array(text.utf8)[...], receivedAll: closed) { return (whole.response, closed) }
            if closed { return (nil, true) }
        }
        return (nil, false)
    }

    deinit {
        close(fd)
    }
}
