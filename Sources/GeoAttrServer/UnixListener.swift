#if canImport(Glibc)
import Glibc
#endif

/// Creates the API's listening Unix socket so that it never exists with a wider mode than
/// configured: it is bound inside a private (0700) directory beside the final path, given its
/// mode there, then renamed into place, which is atomic.
///
/// NIO does not set a socket file's mode, and a chmod after bind leaves a window.
public enum UnixListener {
    public struct Failure: Error, Sendable, CustomStringConvertible {
        public var description: String
    }

    /// Returns the listening descriptor (CLOEXEC, non-blocking) bound at `path`.
    public static func make(path: String, mode: UInt32, backlog: Int32 = 1024) throws(Failure) -> Int32 {
        guard path.utf8.count < 108 else { throw Failure(description: "socket path longer than 107 bytes: \(path)") }
        let directory = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "."
        var existing = stat()
        if lstat(path, &existing) == 0 {
            guard (existing.st_mode & S_IFMT) == S_IFSOCK else {
                throw Failure(description: "\(path) exists and is not a socket: remove it or choose another socket.path")
            }
        }
        let staging = "\(path).staging-\(getpid())"
        _ = rmdirRecursively(staging)
        guard mkdir(staging, 0o700) == 0 else {
            throw Failure(description: "cannot create \(staging) in \(directory): \(errorText())")
        }
        defer { _ = rmdirRecursively(staging) }
        let temporary = "\(staging)/s"

        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket(AF_UNIX) failed: \(errorText())") }
        do throws(Failure) {
            try bind(fd, to: temporary)
            guard chmod(temporary, mode_t(mode)) == 0 else { throw Failure(description: "chmod of the socket failed: \(errorText())") }
            guard listen(fd, backlog) == 0 else { throw Failure(description: "listen failed: \(errorText())") }
            guard rename(temporary, path) == 0 else {
                throw Failure(description: "cannot move the socket to \(path): \(errorText())")
            }
        } catch {
            close(fd)
            throw error
        }
        return fd
    }

    static func bind(_ fd: Int32, to path: String) throws(Failure) {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
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

    static func rmdirRecursively(_ directory: String) -> Bool {
        unlink("\(directory)/s")
        return rmdir(directory) == 0
    }

    static func errorText() -> String { String(cString: strerror(errno)) }
}
