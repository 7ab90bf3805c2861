#if canImport(Glibc)
import Glibc
#endif

/// Whole-file reads and crash-safe replacement with plain system calls.
package enum FileBytes {
    package enum ReadError: Error {
        case tooLarge
        case system(String)
    }

    package struct WriteError: Error {
        package var reason: String
    }

    /// The file's bytes, `nil` if it does not exist.
    package static func read(_ path: String, limit: Int) throws(ReadError) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw .system(errorText())
        }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw .system(errorText())
            }
            if n == 0 { return bytes }
            bytes.append(contentsOf: chunk[0..<n])
            if bytes.count > limit { throw .tooLarge }
        }
    }

    /// Replaces `path` so that a crash at any point leaves the old or the new complete file:
    /// a temporary file beside it, fsync, rename, fsync of the directory.
    package static func writeAtomically(_ bytes: [UInt8], to path: String, directory: String, mode: UInt32 = 0o600) throws(WriteError) {
        let temporary = "\(path).tmp-\(getpid())"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode_t(mode))
        guard fd >= 0 else { throw WriteError(reason: "creating \(temporary): \(errorText())") }
        // The mode asked for, whatever the umask (the unit sets UMask=0077; output files for other
        // readers ask for 0644 explicitly).
        _ = fchmod(fd, mode_t(mode))
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress.map { $0 + offset }, $0.count - offset) }
            if written < 0 {
                if errno == EINTR { continue }
                let reason = errorText()
                close(fd)
                unlink(temporary)
                throw WriteError(reason: "writing \(temporary): \(reason)")
            }
            offset += written
        }
        if fsync(fd) != 0 {
            let reason = errorText()
            close(fd)
            unlink(temporary)
            throw WriteError(reason: "fsync of \(temporary): \(reason)")
        }
        if close(fd) != 0 {
            let reason = errorText()
            unlink(temporary)
            throw WriteError(reason: "closing \(temporary): \(reason)")
        }
        if rename(temporary, path) != 0 {
            let reason = errorText()
            unlink(temporary)
            throw WriteError(reason: "renaming into place: \(reason)")
        }
        let directoryFD = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directoryFD >= 0 {
            _ = fsync(directoryFD)
            close(directoryFD)
        }
    }

    /// Removes the temporary files `writeAtomically` left beside `path` (`path.tmp-PID`) when the
    /// process writing them died mid-write (kill -9, power cut): those of PIDs that no longer run.
    /// Each crash would otherwise leave one behind for good. Returns the paths removed.
    package static func removeStaleTemporaries(of path: String, directory: String) -> [String] {
        let prefix = (path.split(separator: "/").last.map(String.init) ?? path) + ".tmp-"
        guard let stream = opendir(directory) else { return [] }
        defer { closedir(stream) }
        var removed: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard name.hasPrefix(prefix), let pid = pid_t(name.dropFirst(prefix.count)), pid > 0, pid != getpid() else { continue }
            // Alive (EPERM: alive, another user's): its write may be in progress.
            if kill(pid, 0) == 0 || errno == EPERM { continue }
            let stale = "\(directory)/\(name)"
            if unlink(stale) == 0 { removed.append(stale) }
        }
        return removed
    }

    package static func errorText(_ code: Int32 = errno) -> String {
        String(cString: strerror(code))
    }
}
