#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Names for files and directories made beside another before they take its place.
public enum TemporaryName {
    /// `NAME.ROLE-PID-RANDOM`: no one can guess it, and the PID lets a later start tell a dead
    /// writer's leftover from a live one's.
    public static func unique(for name: String, role: String) -> String {
        "\(name).\(role)-\(getpid())-\(String(UInt64.random(in: 1...UInt64.max), radix: 16))"
    }
}
