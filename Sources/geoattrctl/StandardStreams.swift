import SystemWrites

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes whole lines straight to a descriptor, so output order and flushing are predictable
/// when the CLI is a co-process.
enum StandardStreams {
    static func writeLine(_ text: String, to fd: Int32) {
        writeAll(Array((text + "\n").utf8), to: fd)
    }

    static func out(_ text: String) { writeLine(text, to: STDOUT_FILENO) }

    /// Raw bytes to standard output, as received.
    static func writeRaw(_ bytes: [UInt8]) { writeAll(bytes, to: STDOUT_FILENO) }

    static func err(_ text: String) { writeLine("geoattrctl: " + text, to: STDERR_FILENO) }

    /// Output that cannot be written (a closed pipe) has nowhere else to go.
    private static func writeAll(_ bytes: [UInt8], to fd: Int32) {
        try? Descriptor.writeAll(bytes, to: fd)
    }
}
