import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

public enum Loopback {
    /// Ports handed out in this process, so concurrent tests never get the same one.
    private static let handedOut = Mutex<Set<UInt16>>([])

    /// A TCP port on 127.0.0.1 that is free now. Chosen below the kernel's ephemeral range
    /// (32768+), so that no outgoing connection (a readiness probe, a client) can take it
    /// between this check and the server's bind.
    public static func freePort() throws -> UInt16 {
        for _ in 0..<200 {
            let port = UInt16.random(in: 20_000..<32_000)
            let fresh = handedOut.withLock { $0.insert(port).inserted }
            if fresh, isBindable(port) { return port }
        }
        throw ChildProcess.SpawnError(description: "no free port found in 20000-31999")
    }

    static func isBindable(_ port: UInt16) -> Bool {
        withLoopbackSocket(port: port) { fd, address, length in bind(fd, address, length) == 0 }
    }

    /// Runs `body` with a new TCP socket and the address 127.0.0.1:`port`; closes the socket.
    static func withLoopbackSocket(port: UInt16, _ body: (Int32, UnsafePointer<sockaddr>, socklen_t) -> Bool) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = port.bigEndian
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { body(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
    }

    /// Whether something accepts TCP connections on 127.0.0.1:`port` now.
    public static func accepts(port: UInt16) -> Bool {
        withLoopbackSocket(port: port) { fd, address, length in connect(fd, address, length) == 0 }
    }

    /// Whether an IPv4 TCP connection to `port` is established now, by its client side in
    /// /proc/net/tcp. A probe by `accepts(port:)` is past that state once it returned.
    public static func hasEstablishedClient(port: UInt16) -> Bool {
        // Read to the end: String(contentsOfFile:) stops after the first page of a /proc file.
        guard let handle = FileHandle(forReadingAtPath: "/proc/net/tcp") else { return false }
        defer { try? handle.close() }
        guard let bytes = try? handle.readToEnd() else { return false }
        let table = String(decoding: bytes, as: UTF8.self)
        let remote = String(format: ":%04X", port)
        // "sl local_address rem_address st ...": the remote end is the port, the state 01 (ESTABLISHED).
        return table.split(separator: "\n").dropFirst().contains { line in
            let fields = line.split(separator: " ")
            return fields.count > 3 && fields[2].hasSuffix(remote) && fields[3] == "01"
        }
    }
}
