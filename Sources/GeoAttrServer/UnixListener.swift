import GeoAttrLinux
import SystemWrites

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Creates the API's listening Unix socket so that it never exists with a wider mode than
/// configured: it is bound inside a new private (0700) directory beside the final path, given
/// its mode there, then renamed into place, which is atomic.
///
/// NIO does not set a socket file's mode, and a chmod after bind leaves a window. The staging
/// directory's name cannot be guessed and is created with `mkdirat`, which never follows a
/// link; everything after that is relative to descriptors, so nothing planted beside the socket
/// is followed or removed.
public enum UnixListener {
    public struct Failure: Error, Sendable, CustomStringConvertible {
        public var description: String
    }

    /// Returns the listening descriptor (CLOEXEC, non-blocking) bound at `path`.
    public static func make(path: String, mode: UInt32, backlog: Int32 = 1024) throws(Failure) -> Int32 {
        guard path.utf8.count < 108 else { throw Failure(description: "socket path longer than 107 bytes: \(path)") }
        let (directory, name) = PathComponents.split(path)
        let directoryFD = open(directory, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard directoryFD >= 0 else { throw Failure(description: "cannot open the socket's directory \(directory): \(errorText())") }
        defer { close(directoryFD) }
        var existing = stat()
        if fstatat(directoryFD, name, &existing, AT_SYMLINK_NOFOLLOW) == 0, existing.st_mode & S_IFMT != S_IFSOCK {
            throw Failure(description: "\(path) exists and is \(FileKind.name(of: existing.st_mode)), not a socket: remove it or choose another path")
        }
        let staging = TemporaryName.unique(for: name, role: "staging")
        guard mkdirat(directoryFD, staging, 0o700) == 0 else {
            throw Failure(description: "cannot create \(staging) in \(directory): \(errorText())")
        }
        let stagingFD = openat(directoryFD, staging, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        defer {
            if stagingFD >= 0 {
                unlinkat(stagingFD, "s", 0)
                close(stagingFD)
            }
            unlinkat(directoryFD, staging, AT_REMOVEDIR)
        }
        guard stagingFD >= 0 else { throw Failure(description: "cannot open \(staging) in \(directory): \(errorText())") }

        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket(AF_UNIX) failed: \(errorText())") }
        do throws(Failure) {
            // Through the directory's descriptor: short whatever the path, and no component of it
            // can be swapped between mkdirat and bind. The path itself where /proc is missing.
            do throws(Failure) {
                try bind(fd, to: "/proc/self/fd/\(stagingFD)/s")
            } catch {
                try bind(fd, to: "\(directory)/\(staging)/s")
            }
            guard fchmodat(stagingFD, "s", mode_t(mode), 0) == 0 else { throw Failure(description: "chmod of the socket failed: \(errorText())") }
            guard listen(fd, backlog) == 0 else { throw Failure(description: "listen failed: \(errorText())") }
            guard renameat(stagingFD, "s", directoryFD, name) == 0 else {
                throw Failure(description: "cannot move the socket to \(path): \(errorText())")
            }
        } catch {
            close(fd)
            throw error
        }
        return fd
    }

    /// Removes the staging directories of daemons that died between creating one and moving
    /// their socket into place (`NAME.staging-PID...` of PIDs that no longer run).
    public static func removeStaleStaging(of path: String) -> [String] {
        let name = PathComponents.split(path).name
        return StaleTemporaries.removeEntries(in: PathComponents.split(path).directory, prefix: name + ".staging-") { directoryFD, entry in
            let stagingFD = openat(directoryFD, entry, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            if stagingFD >= 0 {
                unlinkat(stagingFD, "s", 0)
                close(stagingFD)
            }
            return unlinkat(directoryFD, entry, AT_REMOVEDIR) == 0
        }
    }

    static func bind(_ fd: Int32, to path: String) throws(Failure) {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            throw Failure(description: "bind to \(path) failed: the path is too long for a Unix socket")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + 1)
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(fd, $0, length) }
        }
        guard rc == 0 else { throw Failure(description: "bind to \(path) failed: \(errorText())") }
    }

    static func errorText() -> String { String(cString: strerror(errno)) }
}
