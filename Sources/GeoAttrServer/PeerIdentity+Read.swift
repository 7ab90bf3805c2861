import NIOCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

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
