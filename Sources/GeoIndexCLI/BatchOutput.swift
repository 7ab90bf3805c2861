import SystemWrites

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
        defer { buffered.removeAll(keepingCapacity: true) }
        do {
            try Descriptor.writeAll(buffered, to: descriptor)
        } catch {
            throw .write(errno: error.errno)
        }
    }
}
