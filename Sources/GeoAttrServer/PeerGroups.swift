import NIOCore

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
