import GeoAttrGPSD
import GeoAttrSettings

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Whether a local user whom nobody named can reach gpsd. gpsd has no access control: whoever
/// connects reads the exact position, whatever geoattrd's access rules say. Run as root, the
/// probe's socket is made with the effective uid 65534 (nobody): a socket keeps the credentials
/// it was made with, and they are what nftables' `meta skuid` matches. The process is root again
/// before it connects; doctor does nothing else meanwhile.
enum GPSDExposure {
    enum Outcome: Equatable {
        /// The probe's connection was accepted.
        case open(asUID: UInt32)
        /// Refused: reset, by gpsd's absence or by a guard.
        case closed(asUID: UInt32)
        /// The probe could not tell (no socket, no answer in time, another error).
        case unknown(asUID: UInt32, reason: String)
        /// The endpoint is not on this machine, or its address could not be resolved.
        case notLocal
    }

    static let nobody: UInt32 = 65_534

    static func probe(_ endpoint: GPSDEndpoint, timeoutMilliseconds: Int32 = 2_000) -> Outcome {
        guard let address = localAddress(endpoint) else { return .notLocal }
        let probeUID = geteuid() == 0 ? nobody : geteuid()
        let fd: Int32
        let kind = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
        if geteuid() == 0 {
            guard seteuid(probeUID) == 0 else { return .unknown(asUID: probeUID, reason: "could not act as uid \(probeUID): errno \(errno)") }
            fd = socket(address.family, kind, 0)
            let socketError = errno
            guard seteuid(0) == 0 else { fatalRestore() }
            errno = socketError
        } else {
            fd = socket(address.family, kind, 0)
        }
        guard fd >= 0 else { return .unknown(asUID: probeUID, reason: "no socket: errno \(errno)") }
        defer { close(fd) }
        let started = withUnsafeBytes(of: address.storage) { bytes in
            bytes.withMemoryRebound(to: sockaddr.self) { connect(fd, $0.baseAddress, address.length) }
        }
        if started == 0 { return .open(asUID: probeUID) }
        guard errno == EINPROGRESS else { return outcome(ofError: errno, asUID: probeUID) }
        var pfd = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
        guard poll(&pfd, 1, timeoutMilliseconds) == 1 else {
            return .unknown(asUID: probeUID, reason: "no answer within \(timeoutMilliseconds) ms")
        }
        var failure: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_ERROR, &failure, &length) == 0 else { return .unknown(asUID: probeUID, reason: "errno \(errno)") }
        return failure == 0 ? .open(asUID: probeUID) : outcome(ofError: failure, asUID: probeUID)
    }

    /// A refusal is an answer; any other failure leaves the question open.
    private static func outcome(ofError code: Int32, asUID uid: UInt32) -> Outcome {
        code == ECONNREFUSED || code == ECONNRESET ? .closed(asUID: uid) : .unknown(asUID: uid, reason: "errno \(code)")
    }

    /// Root could not be taken back (the saved uid is root's, so the kernel does not refuse it):
    /// nothing this process does next would be what its user asked for.
    private static func fatalRestore() -> Never {
        StandardStreams.err("could not return to root after the gpsd access probe")
        exit(1)
    }

    struct Address {
        var family: Int32
        var storage = sockaddr_storage()
        var length: socklen_t

        /// `address` (a `sockaddr_in` or `sockaddr_in6`) in storage that `connect` takes.
        init<SocketAddress>(family: Int32, _ address: SocketAddress) {
            self.family = family
            length = socklen_t(MemoryLayout<SocketAddress>.size)
            withUnsafeMutableBytes(of: &storage) { target in withUnsafeBytes(of: address) { target.copyMemory(from: $0) } }
        }
    }

    /// The endpoint's address when it is a loopback address or `localhost`; gpsd on another host
    /// is that host's to guard.
    static func localAddress(_ endpoint: GPSDEndpoint) -> Address? {
        var v4 = in_addr()
        if endpoint.host == "localhost" || inet_pton(AF_INET, endpoint.host, &v4) == 1 {
            if endpoint.host == "localhost" { v4.s_addr = in_addr_t(0x7F00_0001).bigEndian }
            guard UInt32(bigEndian: v4.s_addr) >> 24 == 127 else { return nil }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = endpoint.port.bigEndian
            address.sin_addr = v4
            return Address(family: AF_INET, address)
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, endpoint.host, &v6) == 1 else { return nil }
        let loopback = withUnsafeBytes(of: v6) { Array($0) } == [UInt8](repeating: 0, count: 15) + [1]
        guard loopback else { return nil }
        var address = sockaddr_in6()
        address.sin6_family = sa_family_t(AF_INET6)
        address.sin6_port = endpoint.port.bigEndian
        address.sin6_addr = v6
        return Address(family: AF_INET6, address)
    }
}
