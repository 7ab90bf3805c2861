import GeoAttrModel
import GeoAttrSettings

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
