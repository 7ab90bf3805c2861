#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// `lookup --batch`'s output, buffered for throughput and written out in large writes.
struct BatchOutput {
    static let flushThreshold = 1 << 16

    let descriptor: Int32
    private var buffered: [UInt8] = []

    init(descriptor: Int32) {
        self.descriptor = descriptor
        buffered.reserveCapacity(Self.flushThreshold * 2)
    }

    mutating func append(contentsOf bytes: ArraySlice<UInt8>) throws(BatchLookup.Failure) {
        buffered.append(contentsOf: bytes)
        if buffered.count >= Self.flushThreshold { try flush() }
    }

    mutating func flush() throws(BatchLookup.Failure) {
        var failure: Int32 = 0
        buffered.withUnsafeBytes { buffer in
            guard let base = buffer.baseAddress else { return }
            var done = 0
            while done < buffer.count {
                let n = write(descriptor, base + done, buffer.count - done)
                if n < 0 {
                    if errno == EINTR { continue }
                    failure = errno
                    return
                }
                done += n
            }
        }
        buffered.removeAll(keepingCapacity: true)
        if failure != 0 { throw .write(errno: failure) }
    }
}
