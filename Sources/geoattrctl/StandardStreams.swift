#if canImport(Glibc)
import Glibc
#endif

/// Writes whole lines straight to a descriptor, so output order and flushing are predictable
/// when the CLI is a co-process.
enum StandardStreams {
    static func writeLine(_ text: String, to fd: Int32) {
        var bytes = Array((text + "\n").utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeMutableBytes { buffer in
                write(fd, buffer.baseAddress.map { $0 + offset }, buffer.count - offset)
            }
            if written < 0 {
                if errno == EINTR { continue }
                return
            }
            offset += written
        }
    }

    static func out(_ text: String) { writeLine(text, to: STDOUT_FILENO) }

    /// Raw bytes to standard output, as received.
    static func writeRaw(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.write(STDOUT_FILENO, $0.baseAddress.map { $0 + offset }, $0.count - offset) }
            if written < 0 {
                if errno == EINTR { continue }
                return
            }
            offset += written
        }
    }
    static func err(_ text: String) { writeLine("geoattrctl: " + text, to: STDERR_FILENO) }
}
