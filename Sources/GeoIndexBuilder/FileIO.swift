#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Whole-file reads and writes through the C library (the builder stays Foundation-free).
enum FileIO {
    /// The file's bytes followed by one NUL, so number parsing with strtod always stops inside.
    static func readTerminated(_ path: String) throws(BuildError) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .cannotRead(path: path, errno: errno) }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0 else { throw .cannotRead(path: path, errno: errno) }
        let size = Int(status.st_size)
        var bytes = [UInt8](repeating: 0, count: size + 1)
        var done = 0
        var failure: Int32 = 0
        bytes.withUnsafeMutableBytes { buffer in
            guard let base = buffer.baseAddress else { return }
            while done < size {
                let n = read(fd, base + done, size - done)
                if n < 0 {
                    if errno == EINTR { continue }
                    failure = errno
                    return
                }
                if n == 0 { break }
                done += n
            }
        }
        if failure != 0 { throw .cannotRead(path: path, errno: failure) }
        if done < size { bytes.removeLast(size - done) }
        return bytes
    }

    static func exists(_ path: String) -> Bool {
        access(path, R_OK) == 0
    }

    /// Writes to a new file beside `path` and renames, so a reader never sees a half-written
    /// index. The new file's name cannot be guessed and it is created with `O_EXCL | O_NOFOLLOW`,
    /// so nothing planted beside the index is written through.
    static func writeAtomically(_ bytes: [UInt8], to path: String) throws(BuildError) {
        let temporary = "\(path).tmp-\(getpid())-\(String(UInt64.random(in: 1...UInt64.max), radix: 16))"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw .cannotWrite(path: temporary, errno: errno) }
        var failure: Int32 = 0
        bytes.withUnsafeBytes { buffer in
            guard let base = buffer.baseAddress else { return }
            var done = 0
            while done < buffer.count {
                let n = write(fd, base + done, buffer.count - done)
                if n < 0 {
                    if errno == EINTR { continue }
                    failure = errno
                    return
                }
                done += n
            }
        }
        if failure == 0 && fsync(fd) != 0 { failure = errno }
        close(fd)
        if failure != 0 {
            unlink(temporary)
            throw .cannotWrite(path: temporary, errno: failure)
        }
        guard rename(temporary, path) == 0 else { throw .cannotWrite(path: path, errno: errno) }
    }
}
