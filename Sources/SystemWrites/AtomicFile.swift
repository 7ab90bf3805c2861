#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Crash-safe replacement of a file, safe in directories that someone else can write to.
public enum AtomicFile {
    /// Which step failed, on which file, and the errno.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        /// What was being done, as a message names it ("writing", "fsync of", ...).
        public var step: String
        /// What the message names after the step; `nil` where the step says it all.
        public var subject: String?
        /// The file the failed call was about: the directory, the temporary file, or the final
        /// path for the rename.
        public var file: String
        public var errno: Int32

        public var description: String {
            let reason = String(cString: strerror(errno))
            guard let subject else { return "\(step): \(reason)" }
            return "\(step) \(subject): \(reason)"
        }
    }

    /// Replaces `path` so that a crash at any point leaves the old or the new complete file: a
    /// new file beside it, fsync, rename over the old one, fsync of the directory.
    ///
    /// Everything happens relative to the directory, opened once with `O_NOFOLLOW`: the new file
    /// is created with `O_EXCL | O_NOFOLLOW` under a name no one can predict, so a link planted
    /// beside the target is never written through, and `renameat` replaces whatever stands at
    /// the final name (a planted link included) without following it.
    /// - Parameters:
    ///   - mode: the file's mode, whatever the umask; or, with `umasked`, as the umask allows.
    ///   - group: the file's group (the caller must be a member), or `nil` for the default.
    public static func replace(
        _ path: String, with bytes: [UInt8], mode: UInt32 = 0o600, group: UInt32? = nil, umasked: Bool = false
    ) throws(Failure) {
        let (directory, name) = split(path)
        let directoryFD = open(directory, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard directoryFD >= 0 else { throw Failure(step: "opening the directory", subject: directory, file: directory, errno: errno) }
        defer { close(directoryFD) }
        var temporary = ""
        var fd: Int32 = -1
        // A name taken by chance (or by someone guessing) is passed over, not opened.
        for _ in 0..<8 where fd < 0 {
            temporary = TemporaryName.unique(for: name, role: "tmp")
            fd = openat(directoryFD, temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode_t(mode))
            if fd < 0, errno != EEXIST { break }
        }
        let creationError = errno
        // The path as given, with the temporary name for the last component.
        let temporaryPath = String(path.dropLast(name.count)) + temporary
        guard fd >= 0 else {
            throw Failure(step: "creating a temporary file in", subject: directory, file: temporaryPath, errno: creationError)
        }
        func fail(_ step: String, closing: Bool = true, errno code: Int32 = errno) -> Failure {
            if closing { close(fd) }
            unlinkat(directoryFD, temporary, 0)
            return Failure(step: step, subject: temporaryPath, file: temporaryPath, errno: code)
        }
        // The group before the mode: until then the file has the group it was created with (the
        // daemon's primary group, or a set-group-ID directory's).
        if let group, fchown(fd, uid_t.max, gid_t(group)) != 0 {
            throw fail("setting group \(group) on")
        }
        guard umasked || fchmod(fd, mode_t(mode)) == 0 else { throw fail("setting the mode of") }
        do {
            try Descriptor.writeAll(bytes, to: fd)
        } catch {
            throw fail("writing", errno: error.errno)
        }
        guard fsync(fd) == 0 else { throw fail("fsync of") }
        guard close(fd) == 0 else { throw fail("closing", closing: false) }
        guard renameat(directoryFD, temporary, directoryFD, name) == 0 else {
            let code = errno
            unlinkat(directoryFD, temporary, 0)
            throw Failure(step: "renaming into place", subject: nil, file: path, errno: code)
        }
        _ = fsync(directoryFD)
    }

    /// The directory (`.` for a bare name) and the last component.
    private static func split(_ path: String) -> (directory: String, name: String) {
        guard let slash = path.lastIndex(of: "/") else { return (".", path) }
        let directory = path[..<slash]
        return (directory.isEmpty ? "/" : String(directory), String(path[path.index(after: slash)...]))
    }
}
