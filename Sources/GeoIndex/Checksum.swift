/// A fast 64-bit non-cryptographic checksum over 8-byte words (multiply-xorshift mixing).
///
/// It detects accidental corruption (truncation, bit flips, partial copies); it is not meant
/// to resist a deliberate forger, which is why the reader bounds-checks every offset anyway.
public struct Checksum64: Sendable {
    private var state: UInt64 = 0x9E37_79B9_7F4A_7C15

    public init() {}

    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        var offset = 0
        let count = bytes.count
        var h = state
        while offset + 8 <= count {
            let word = bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            h = (h ^ word) &* 0xBF58_476D_1CE4_E5B9
            h ^= h >> 31
            offset += 8
        }
        var tail: UInt64 = 0
        var shift: UInt64 = 0
        while offset < count {
            tail |= UInt64(bytes[offset]) << shift
            shift += 8
            offset += 1
        }
        h = (h ^ tail ^ UInt64(count)) &* 0x94D0_49BB_1331_11EB
        h ^= h >> 29
        state = h
    }

    public var value: UInt64 { state }
}
