#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import SystemPackage

/// Whole-file reads and the leftovers of interrupted writes, with plain system calls, safe in
/// directories that someone else can write to: no path is followed through a symbolic link and
/// nothing but a regular file is read.
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
