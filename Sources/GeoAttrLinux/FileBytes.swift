#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import SystemPackage

/// Whole-file reads and crash-safe replacement with plain system calls, safe in directories
/// that someone else can write to: no path is followed through a symbolic link, nothing but a
/// regular file is read, and nothing is created under a name that can be guessed.
package enum FileBytes {
    package enum ReadError: Error, CustomStringConvertible {
        case tooLarge
        /// A symbolic link, FIFO, socket or device where a regular file belongs.
        case notRegular(kind: String)
        case system(String)

        package var description: String {
            switch self {
            case .tooLarge: "too large"
            case .notRegular(let kind): "refused: \(kind), not a regular file"
            case .system(let reason): reason
            }
        }
    }

    package struct WriteError: Error {
        package var reason: String
    }

    /// The file's bytes, `nil` if it does not exist.
    ///
    /// Opened with `O_NOFOLLOW | O_NONBLOCK` and checked with `fstat` before a byte is read: a
    /// symbolic link is refused rather than followed, and a FIFO planted at the path cannot
    /// block the caller in `open` or `read`.
    package static func read(_ path: String, limit: Int) throws(ReadError) -> [UInt8]? {
        let file: FileDescriptor
        do {
            file = try FileDescriptor.open(FilePath(path), .readOnly, options: [.closeOnExec, .noFollow, .nonBlocking])
        } catch let error as Errno where error == .noSuchFileOrDirectory {
            return nil
        } catch let error as Errno where error == .tooManySymbolicLinkLevels {
            throw .notRegular(kind: "a symbolic link")
        } catch {
            throw .system("\(error)")
        }
        defer { try? file.close() }
        let status: Stat
        do {
            status = try file.stat()
        } catch {
            throw .system("\(error)")
        }
        guard status.type == .regular else { throw .notRegular(kind: kind(of: UInt32(status.mode.rawValue))) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let count: Int
            do {
                count = try chunk.withUnsafeMutableBytes { try file.read(into: $0) }
            } catch {
                throw .system("\(error)")
            }
            if count == 0 { return bytes }
            bytes.append(contentsOf: chunk[0..<count])
            if bytes.count > limit { throw .tooLarge }
        }
    }

    /// What a file type is called in a message an operator reads.
    package static func kind(of mode: UInt32) -> String {
        switch mode & S_IFMT {
        case S_IFREG: "a regular file"
        case S_IFDIR: "a directory"
        case S_IFLNK: "a symbolic link"
        case S_IFIFO: "a FIFO"
        case S_IFSOCK: "a socket"
        case S_IFCHR, S_IFBLK: "a device"
        default: "a special file"
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
    ///   - mode: the file's mode, whatever the umask.
    ///   - group: the file's group (the caller must be a member), or `nil` for the default.
    package static func writeAtomically(_ bytes: [UInt8], to path: String, mode: UInt32 = 0o600, group: UInt32? = nil) throws(WriteError) {
        let (directory, name) = split(path)
        let directoryFD = open(directory, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard directoryFD >= 0 else { throw WriteError(reason: "opening the directory \(directory): \(errorText())") }
        defer { close(directoryFD) }
        var temporary = ""
        var fd: Int32 = -1
        // A name taken by chance (or by someone guessing) is passed over, not opened.
        for _ in 0..<8 where fd < 0 {
            temporary = uniqueName(for: name, role: "tmp")
            fd = openat(directoryFD, temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode_t(mode))
            if fd < 0, errno != EEXIST { break }
        }
        guard fd >= 0 else { throw WriteError(reason: "creating a temporary file in \(directory): \(errorText())") }
        func fail(_ step: String, closing: Bool = true, reason given: String? = nil) -> WriteError {
            let reason = given ?? errorText()
            if closing { close(fd) }
            unlinkat(directoryFD, temporary, 0)
            return WriteError(reason: "\(step) \(directory)/\(temporary): \(reason)")
        }
        // The group before the mode: until then the file has the group it was created with (the
        // daemon's primary group, or a set-group-ID directory's).
        if let group, fchown(fd, uid_t.max, gid_t(group)) != 0 {
            throw fail("setting group \(group) on")
        }
        guard fchmod(fd, mode_t(mode)) == 0 else { throw fail("setting the mode of") }
        do {
            _ = try FileDescriptor(rawValue: fd).writeAll(bytes)
        } catch {
            throw fail("writing", reason: "\(error)")
        }
        guard fsync(fd) == 0 else { throw fail("fsync of") }
        guard close(fd) == 0 else { throw fail("closing", closing: false) }
        guard renameat(directoryFD, temporary, directoryFD, name) == 0 else {
            let reason = errorText()
            unlinkat(directoryFD, temporary, 0)
            throw WriteError(reason: "renaming into place: \(reason)")
        }
        _ = fsync(directoryFD)
    }

    /// `NAME.ROLE-PID-RANDOM`: no one can guess it, and the PID lets a later start tell a dead
    /// writer's leftover from a live one's.
    package static func uniqueName(for name: String, role: String) -> String {
        "\(name).\(role)-\(getpid())-\(String(UInt64.random(in: 1...UInt64.max), radix: 16))"
    }

    /// Removes the temporary files that writes of `path` left behind when the process writing
    /// them died mid-write (kill -9, power cut): `NAME.tmp-PID` or `NAME.tmp-PID-RANDOM` of PIDs
    /// that no longer run. Each crash would otherwise leave one behind for good. Entries are
    /// removed, never followed. Returns the paths removed.
    package static func removeStaleTemporaries(of path: String) -> [String] {
        let (directory, name) = split(path)
        return removeStale(in: directory, prefix: name + ".tmp-") { directoryFD, entry in
            unlinkat(directoryFD, entry, 0) == 0
        }
    }

    /// Calls `remove` for each entry of `directory` named `PREFIX` + a PID (+ `-SUFFIX`) whose
    /// process no longer runs; returns the paths it removed.
    package static func removeStale(
        in directory: String, prefix: String, remove: (_ directoryFD: Int32, _ entry: String) -> Bool
    ) -> [String] {
        let directoryFD = open(directory, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard directoryFD >= 0 else { return [] }
        // The stream owns the descriptor from here on.
        guard let stream = fdopendir(directoryFD) else {
            close(directoryFD)
            return []
        }
        defer { closedir(stream) }
        var removed: [String] = []
        while let entry = readdir(stream) {
            let entryName = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard entryName.hasPrefix(prefix) else { continue }
            let pidText = entryName.dropFirst(prefix.count).prefix { $0 != "-" }
            guard let pid = pid_t(pidText), pid > 0, pid != getpid() else { continue }
            // Alive (EPERM: alive, another user's): its write may be in progress.
            if kill(pid, 0) == 0 || errno == EPERM { continue }
            if remove(dirfd(stream), entryName) { removed.append("\(directory)/\(entryName)") }
        }
        return removed
    }

    /// The directory (`.` for a bare name) and the last component.
    package static func split(_ path: String) -> (directory: String, name: String) {
        let filePath = FilePath(path)
        let directory = filePath.removingLastComponent().string
        return (directory.isEmpty ? "." : directory, filePath.lastComponent?.string ?? "")
    }

    package static func errorText(_ code: Int32 = errno) -> String {
        String(cString: strerror(code))
    }
}
