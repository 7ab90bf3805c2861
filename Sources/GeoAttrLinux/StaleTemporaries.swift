#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The leftovers of writers that died: files and directories named after a PID (as
/// `TemporaryName` makes them) whose process no longer runs.
package enum StaleTemporaries {
    /// Removes the temporary files that writes of `path` left behind when the process writing
    /// them died mid-write (kill -9, power cut): `NAME.tmp-PID` or `NAME.tmp-PID-RANDOM` of PIDs
    /// that no longer run. Each crash would otherwise leave one behind for good. Entries are
    /// removed, never followed. Returns the paths removed.
    package static func removeTemporaries(of path: String) -> [String] {
        let (directory, name) = PathComponents.split(path)
        return removeEntries(in: directory, prefix: name + ".tmp-") { directoryFD, entry in
            unlinkat(directoryFD, entry, 0) == 0
        }
    }

    /// Calls `remove` for each entry of `directory` named `PREFIX` + a PID (+ `-SUFFIX`) whose
    /// process no longer runs; returns the paths it removed.
    package static func removeEntries(
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
}
