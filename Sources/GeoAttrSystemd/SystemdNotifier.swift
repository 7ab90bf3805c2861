#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The sd_notify datagram protocol (sd_notify(3)), without libsystemd: one AF_UNIX datagram of
/// `KEY=VALUE` lines to `$NOTIFY_SOCKET` (a path, or `@name` for an abstract socket). A no-op when
/// the variable is unset (not started by systemd). Sent from the daemon's own process, which is
/// what `NotifyAccess=main` accepts.
public final class SystemdNotifier: Sendable {
    private let fd: Int32
    private let address: [UInt8]

    /// `nil` when `NOTIFY_SOCKET` is unset or unusable.
    public init?(environment socketPath: String? = SystemdNotifier.environmentSocket()) {
        guard let socketPath, socketPath.hasPrefix("/") || socketPath.hasPrefix("@"), socketPath.utf8.count < 108 else { return nil }
        var bytes = Array(socketPath.utf8)
        if bytes.first == UInt8(ascii: "@") { bytes[0] = 0 }
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return nil }
        self.fd = fd
        address = bytes
    }

    public static func environmentSocket() -> String? {
        guard let value = getenv("NOTIFY_SOCKET") else { return nil }
        return String(cString: value)
    }

    /// Sends `fields` (`READY=1`, `STATUS=...`) in one datagram; `false` if it could not be sent.
    @discardableResult
    public func send(_ fields: [String]) -> Bool {
        var message = Array(fields.joined(separator: "\n").utf8)
        var storage = sockaddr_un()
        storage.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &storage.sun_path) { raw in raw.copyBytes(from: address) }
        // Abstract names are not NUL-terminated: the length says where they end.
        let length = socklen_t(MemoryLayout<sa_family_t>.size + address.count + (address.first == 0 ? 0 : 1))
        let sent = withUnsafePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                message.withUnsafeMutableBytes { sendto(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL), socketAddress, length) }
            }
        }
        return sent == message.count
    }

    public func ready(status: String) { send(["READY=1", "STATUS=\(status)"]) }
    public func status(_ text: String) { send(["STATUS=\(text)"]) }
    public func watchdog() { send(["WATCHDOG=1"]) }
    public func stopping() { send(["STOPPING=1", "STATUS=stopping"]) }

    /// RELOADING=1 with MONOTONIC_USEC (wanted by systemd >= 253 for Type=notify-reload).
    public func reloading() {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        let microseconds = Int64(ts.tv_sec) * 1_000_000 + Int64(ts.tv_nsec) / 1000
        send(["RELOADING=1", "MONOTONIC_USEC=\(microseconds)", "STATUS=reloading the configuration"])
    }

    deinit {
        close(fd)
    }
}

/// Sockets passed by systemd socket activation (sd_listen_fds(3)).
public enum ListenFDs {
    public struct Passed: Sendable {
        public var fd: Int32
        public var name: String?
    }

    /// The passed descriptors (from 3), if `LISTEN_PID` is this process; the variables are then
    /// removed so that children do not inherit them, and the descriptors marked close-on-exec.
    public static func take() -> [Passed] {
        defer {
            unsetenv("LISTEN_PID")
            unsetenv("LISTEN_FDS")
            unsetenv("LISTEN_FDNAMES")
        }
        guard let pidText = getenv("LISTEN_PID").map({ String(cString: $0) }), let pid = Int32(pidText), pid == getpid(),
            let countText = getenv("LISTEN_FDS").map({ String(cString: $0) }), let count = Int32(countText), count > 0, count < 64
        else { return [] }
        let names = getenv("LISTEN_FDNAMES").map { String(cString: $0).split(separator: ":", omittingEmptySubsequences: false).map(String.init) } ?? []
        return (0..<count).map { index in
            let fd = 3 + index
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            return Passed(fd: fd, name: Int(index) < names.count ? names[Int(index)] : nil)
        }
    }
}

/// The watchdog interval systemd asked for (`WATCHDOG_USEC`, for this process), if any.
public enum Watchdog {
    public static func interval() -> Duration? {
        if let pidText = getenv("WATCHDOG_PID").map({ String(cString: $0) }), Int32(pidText) != getpid() { return nil }
        guard let text = getenv("WATCHDOG_USEC").map({ String(cString: $0) }), let usec = Int64(text), usec > 0 else { return nil }
        return .microseconds(usec)
    }
}
