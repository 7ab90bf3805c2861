import GeoAttrModel
import NIOCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Who is on the other end of a connection, as the kernel says: the uid and every group, read
/// from the socket (SO_PEERCRED, SO_PEERGROUPS), never from /proc, which the unit hides.
struct PeerIdentity: Sendable, Hashable {
    var uid: UInt32
    /// The primary gid.
    var gid: UInt32
    /// The primary gid and the supplementary groups; `nil` when the kernel's list could not be read.
    var groups: Set<UInt32>?

    /// What this peer is granted under `policy`. Whatever cannot be known about the peer is
    /// resolved towards less access, never more.
    func grant(under policy: AccessPolicy) -> Grant {
        // Credentials the kernel would not give: nobody, who may see nothing.
        guard uid != .max else { return Grant(level: .none) }
        guard let groups else {
            // The supplementary groups are unknown: a gid rule might apply, so only a uid rule
            // or a policy without gid rules decides.
            let byUID = policy.grant(uid: uid, groups: [gid])
            let usesGroups = policy.rules.contains { if case .gid = $0.subject { true } else { false } }
            let matchedUID = policy.rules.contains { $0.subject == .uid(uid) }
            return usesGroups && !matchedUID && uid != 0 && uid != policy.daemonUID ? Grant(level: .none) : byUID
        }
        return policy.grant(uid: uid, groups: groups)
    }

    /// Why this peer sees nothing under `policy`, naming what decides and what to change.
    func refusal(under policy: AccessPolicy) -> String {
        guard uid != .max else { return "the kernel gave no credentials for this connection" }
        guard let groups else {
            return policy.refusal(uid: uid, groups: [gid])
                ?? "its groups could not be read, and access.rules has gid: entries: only a uid: entry decides for it; add uid:\(uid)=LEVEL, then reload"
        }
        return policy.refusal(uid: uid, groups: groups) ?? "access.rules changed since it connected; connect again"
    }
}

/// SO_PEERGROUPS: the peer's supplementary groups, as an array of gids.
///
/// NIO's socket-option helper zero-fills the buffer and does not return the length the kernel
/// wrote, so a zero in the buffer is either gid 0 or the buffer's own. Two facts of the kernel
/// make the list exact all the same: it keeps every group list sorted (`groups_sort`, which its
/// own binary search needs), so gid 0 can only come first, and a zero before a gid is never the
/// buffer's; and it answers a buffer too small for the list with ERANGE, so a zero-length read
/// succeeds exactly when the peer has no group. (The order is that of the kernel's own ids: a
/// reader in a user namespace of its own could see an unmapped group, 65534, before gid 0, which
/// a zero before a gid still finds; the daemon's unit gives it no such namespace.)
enum PeerGroups {
    /// `SO_PEERGROUPS` (Linux 4.13), which Glibc's module does not export.
    static let option = SocketOptionName(59)

    /// A buffer of no bytes: read into it, SO_PEERGROUPS fails with ERANGE when the peer has any
    /// group.
    struct NoGroups {}

    static func gids<let count: Int>(_ buffer: InlineArray<count, UInt32>) -> [UInt32] {
        var gids: [UInt32] = []
        gids.reserveCapacity(count)
        for index in buffer.indices { gids.append(buffer[index]) }
        return gids
    }

    /// The groups in a buffer the kernel filled from the start, sorted, and that was zero before.
    /// - Parameter hasAnyGroup: whether the kernel's list is not empty, which matters only when
    ///   the buffer holds nothing but zeros: it decides between no group and gid 0 alone.
    static func decode(_ gids: [UInt32], hasAnyGroup: Bool) -> Set<UInt32> {
        var groups = Set<UInt32>()
        var zeroSeen = false
        var rootGroup = false
        for gid in gids {
            if gid == 0 {
                zeroSeen = true
            } else {
                if zeroSeen { rootGroup = true }
                groups.insert(gid)
            }
        }
        if rootGroup || (groups.isEmpty && zeroSeen && hasAnyGroup) { groups.insert(0) }
        return groups
    }
}

/// `struct ucred` (pid, uid, gid), which the Glibc module does not export.
struct PeerCredentials: Sendable {
    var pid: Int32 = 0
    var uid: UInt32 = .max
    var gid: UInt32 = .max
}

extension PeerIdentity {
    /// Reads the identity of the peer of `channel`; completes at once on an accepted socket.
    /// Without credentials the peer is nobody (uid and gid `UInt32.max`, no groups known).
    static func read(_ channel: any Channel) -> EventLoopFuture<PeerIdentity> {
        let nobody = PeerIdentity(uid: .max, gid: .max, groups: nil)
        guard let provider = channel as? any SocketOptionProvider else { return channel.eventLoop.makeSucceededFuture(nobody) }
        let credentials: EventLoopFuture<PeerCredentials> = provider.unsafeGetSocketOption(
            level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(SO_PEERCRED))
        return credentials.flatMap { credentials -> EventLoopFuture<PeerIdentity> in
            let identity = PeerIdentity(uid: credentials.uid, gid: credentials.gid, groups: nil)
            // Most peers have a handful of groups; a longer list is read again into a larger buffer.
            let small: EventLoopFuture<InlineArray<64, UInt32>> = provider.unsafeGetSocketOption(
                level: SocketOptionLevel(SOL_SOCKET), name: PeerGroups.option)
            let gids = small.map { PeerGroups.gids($0) }
                .flatMapError { _ in
                    let large: EventLoopFuture<InlineArray<1024, UInt32>> = provider.unsafeGetSocketOption(
                        level: SocketOptionLevel(SOL_SOCKET), name: PeerGroups.option)
                    return large.map { PeerGroups.gids($0) }
                }
            return gids.flatMap { gids -> EventLoopFuture<PeerIdentity> in
                let decoded: @Sendable (Bool) -> PeerIdentity = { identity.with(groups: PeerGroups.decode(gids, hasAnyGroup: $0)) }
                guard gids.allSatisfy({ $0 == 0 }) else { return channel.eventLoop.makeSucceededFuture(decoded(true)) }
                let none: EventLoopFuture<PeerGroups.NoGroups> = provider.unsafeGetSocketOption(
                    level: SocketOptionLevel(SOL_SOCKET), name: PeerGroups.option)
                return none.map { _ in decoded(false) }
                    .flatMapError { error in
                        // ERANGE: at least one group. Anything else leaves the groups unknown.
                        guard let failure = error as? IOError, failure.errnoCode == ERANGE else {
                            return channel.eventLoop.makeFailedFuture(error)
                        }
                        return channel.eventLoop.makeSucceededFuture(decoded(true))
                    }
            }
            .recover { _ in identity }
        }.recover { _ in nobody }
    }

    private func with(groups supplementary: Set<UInt32>) -> PeerIdentity {
        var copy = self
        copy.groups = supplementary.union([gid])
        return copy
    }
}
