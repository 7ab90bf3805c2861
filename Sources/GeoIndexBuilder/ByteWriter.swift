/// Appends little-endian values to a byte array.
struct ByteWriter {
    private(set) var data: [UInt8] = []

    mutating func u8(_ value: UInt8) { data.append(value) }
    mutating func u16(_ value: UInt16) { withUnsafeBytes(of: value.littleEndian) { data.append(contentsOf: $0) } }
    mutating func u32(_ value: UInt32) { withUnsafeBytes(of: value.littleEndian) { data.append(contentsOf: $0) } }
    mutating func u64(_ value: UInt64) { withUnsafeBytes(of: value.littleEndian) { data.append(contentsOf: $0) } }
    mutating func f64(_ value: Double) { u64(value.bitPattern) }
    mutating func bytes(_ values: [UInt8]) { data.append(contentsOf: values) }

    mutating func patchU16(at offset: Int, _ value: UInt16) {
        data[offset] = UInt8(truncatingIfNeeded: value)
        data[offset + 1] = UInt8(truncatingIfNeeded: value >> 8)
    }

    mutating func align(to alignment: Int) {
        while data.count % alignment != 0 { data.append(0) }
    }
}
