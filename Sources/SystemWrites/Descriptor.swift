#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes every byte, however the kernel splits the write: a short write is continued and a
/// write a signal interrupted (EINTR) is made again, so no caller loses the tail of its output.
public enum Descriptor {
    /// Why a write stopped: the errno of the write that failed.
    public struct WriteFailure: Error, Sendable, Equatable {
        public var errno: Int32

        public init(errno: Int32) {
            self.errno = errno
        }
    }

    public static func writeAll(_ buffer: UnsafeRawBufferPointer, to descriptor: Int32) throws(WriteFailure) {
        guard let base = buffer.baseAddress else { return }
        var done = 0
        while done < buffer.count {
            let written = write(descriptor, base + done, buffer.count - done)
            if written < 0 {
                if errno == EINTR { continue }
                throw WriteFailure(errno: errno)
            }
            done += written
        }
    }

    public static func writeAll(_ bytes: [UInt8], to descriptor: Int32) throws(WriteFailure) {
        // withUnsafeBytes rethrows untyped errors: the failure comes out as a value.
        let failure = bytes.withUnsafeBytes { buffer -> WriteFailure? in
            do throws(WriteFailure) {
                try writeAll(buffer, to: descriptor)
                return nil
            } catch {
                return error
            }
        }
        if let failure { throw failure }
    }
}
