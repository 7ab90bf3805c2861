#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import SystemWrites

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

    /// Readers of an index never see half of one; its mode is what the umask allows.
    static func writeAtomically(_ bytes: [UInt8], to path: String) throws(BuildError) {
        do {
            try AtomicFile.replace(path, with: bytes, mode: 0o644, umasked: true)
        } catch {
            throw .cannotWrite(path: error.file, errno: error.errno)
        }
    }
}
