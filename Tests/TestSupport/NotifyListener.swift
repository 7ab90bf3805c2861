import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A stand-in for systemd's notify socket: receives the daemon's sd_notify datagrams.
public final class NotifyListener: Sendable {
    public let path: String
    private let fd: Int32
    private let store = Store()

    private final class Store: Sendable {
        let messages = Mutex<[String]>([])
    }

    public init(directory: TemporaryDirectory) throws {
        path = directory.file("notify.sock")
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        let rc = UnixAddress.withAddress(path) { bind(fd, $0, $1) }
        guard rc == 0 else { throw ChildProcess.SpawnError(description: "bind of the notify socket failed") }
        let thread = Thread { [fd, store] in
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let n = recv(fd, &buffer, buffer.count, 0)
                if n <= 0 { return }
                let text = String(decoding: buffer[0..<n], as: UTF8.self)
                store.messages.withLock { $0.append(text) }
            }
        }
        thread.start()
    }

    public var messages: [String] { store.messages.withLock { $0 } }

    /// Waits for a datagram containing `field`, from message `start` on.
    public func waitFor(_ field: String, from start: Int = 0, timeout: Duration = .seconds(20 * TestTiming.scale)) async -> (index: Int, text: String)? {
        var found: (index: Int, text: String)?
        _ = await eventually(timeout: timeout) {
            let all = messages
            found = all.indices.dropFirst(start).first { all[$0].split(separator: "\n").contains { $0.hasPrefix(field) } }.map { ($0, all[$0]) }
            return found != nil
        }
        return found
    }

    deinit {
        shutdown(fd, Int32(SHUT_RDWR))
        close(fd)
    }
}
