#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// User and group names and ids, through the system's account databases.
package enum AccountNames {
    /// The uid of a user name; `nil` when there is no such user.
    package static func uid(named name: String) -> UInt32? {
        lookUp({ getpwnam_r(name, &$0, $1, $2, &$3) }) { (entry: passwd) in entry.pw_uid }
    }

    /// The gid of a group name (`nil` when there is no such group), or a number taken as it is.
    package static func gid(named name: String) -> UInt32? {
        if let number = UInt32(name) { return number }
        return lookUp({ getgrnam_r(name, &$0, $1, $2, &$3) }) { (entry: group) in entry.gr_gid }
    }

    /// The user's name, or its number when it has none.
    package static func userName(_ uid: UInt32) -> String {
        lookUp({ getpwuid_r(uid, &$0, $1, $2, &$3) }) { (entry: passwd) in String(cString: entry.pw_name) }
            ?? "\(uid)"
    }

    /// The group's name, or its number when it has none.
    package static func groupName(_ gid: UInt32) -> String {
        lookUp({ getgrgid_r(gid, &$0, $1, $2, &$3) }) { (entry: group) in String(cString: entry.gr_name) }
            ?? "\(gid)"
    }

    /// Whether the user is in the group, as its primary group or a supplementary one; `false`
    /// for a uid with no account.
    package static func isMember(_ uid: UInt32, of gid: UInt32) -> Bool {
        guard let (name, primary) = lookUp({ getpwuid_r(uid, &$0, $1, $2, &$3) }, read: { (entry: passwd) in (String(cString: entry.pw_name), entry.pw_gid) })
        else { return false }
        if primary == gid { return true }
        var count: Int32 = 256
        var groups = [gid_t](repeating: 0, count: Int(count))
        guard getgrouplist(name, primary, &groups, &count) >= 0 else { return false }
        return groups.prefix(Int(count)).contains(gid)
    }

    /// Runs one reentrant look-up (`get*_r`) and reads the entry while the buffer its strings
    /// point into still exists.
    private static func lookUp<Entry: Initializable, Value>(
        _ call: (inout Entry, UnsafeMutablePointer<CChar>, Int, inout UnsafeMutablePointer<Entry>?) -> Int32,
        read: (Entry) -> Value
    ) -> Value? {
        var entry = Entry()
        var buffer = [CChar](repeating: 0, count: 16 * 1024)
        return buffer.withUnsafeMutableBufferPointer { buffer in
            var result: UnsafeMutablePointer<Entry>?
            guard let base = buffer.baseAddress, call(&entry, base, buffer.count, &result) == 0, result != nil else { return nil }
            return read(entry)
        }
    }
}

protocol Initializable { init() }
extension passwd: Initializable {}
extension group: Initializable {}
