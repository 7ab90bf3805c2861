/// `struct ucred` (pid, uid, gid), which the Glibc module does not export.
struct PeerCredentials: Sendable {
    var pid: Int32 = 0
    var uid: UInt32 = .max
    var gid: UInt32 = .max
}
