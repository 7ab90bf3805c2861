import GeoAttrGPSD

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
        /// Refused or unreachable.
        case closed(asUID: UInt32)
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
            guard seteuid(probeUID) == 0 else { return .notLocal }
            fd = socket(address.family, kind, 0)
            guard seteuid(0) == 0 else { fatalRestore() }
        } else {
            fd = socket(address.family, kind, 0)
        }
        guard fd >= 0 else { return .closed(asUID: probeUID) }
        defer { close(fd) }
        let started = withUnsafeBytes(of: address.storage) { bytes in
            bytes.withMemoryRebound(to: sockaddr.self) { connect(fd, $0.baseAddress, address.length) }
        }
        if started == 0 { return .open(asUID: probeUID) }
        guard errno == EINPROGRESS else { return .closed(asUID: probeUID) }
        var pfd = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
        guard poll(&pfd, 1, timeoutMilliseconds) == 1 else { return .closed(asUID: probeUID) }
        var failure: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_ERROR, &failure, &length) == 0, failure == 0 else { return .closed(asUID: probeUID) }
        return .open(asUID: probeUID)
    }

    /// Root could not be taken back (the saved uid is root's, so the kernel does not refuse it):
    /// nothing this process does next would be what its user asked for.
    private static func fatalRestore() -> Never {
        StandardStreams.err("could not return to root after the gpsd access probe")
        exit(1)
    }

    struct Address {
        var family: Int32
        var storage: sockaddr_storage
        var length: socklen_t
    }

    /// The endpoint's address when it is a loopback address or `localhost`; gpsd on another host
    /// is that host's to guard.
    static func localAddress(_ endpoint: GPSDEndpoint) -> Address? {
        var storage = sockaddr_storage()
        var v4 = in_addr()
        if endpoint.host == "localhost" || inet_pton(AF_INET, endpoint.host, &v4) == 1 {
            if endpoint.host == "localhost" { v4.s_addr = in_addr_t(0x7F00_0001).bigEndian }
            guard UInt32(bigEndian: v4.s_addr) >> 24 == 127 else { return nil }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = endpoint.port.bigEndian
            address.sin_addr = v4
            withUnsafeMutableBytes(of: &storage) { target in withUnsafeBytes(of: address) { target.copyMemory(from: $0) } }
            return Address(family: AF_INET, storage: storage, length: socklen_t(MemoryLayout<sockaddr_in>.size))
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, endpoint.host, &v6) == 1 else { return nil }
        let loopback = withUnsafeBytes(of: v6) { Array($0) } == [UInt8](repeating: 0, count: 15) + [1]
        guard loopback else { return nil }
        var address = sockaddr_in6()
        address.sin6_family = sa_family_t(AF_INET6)
        address.sin6_port = endpoint.port.bigEndian
        address.sin6_addr = v6
        withUnsafeMutableBytes(of: &storage) { target in withUnsafeBytes(of: address) { target.copyMemory(from: $0) } }
        return Address(family: AF_INET6, storage: storage, length: socklen_t(MemoryLayout<sockaddr_in6>.size))
    }
}
