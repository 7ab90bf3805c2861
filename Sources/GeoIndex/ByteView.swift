/// A read-only window on mapped bytes where every read is bounds-checked.
///
/// Reads past the end return `nil` instead of trapping, so a crafted offset in the file
/// degrades one lookup instead of crashing the daemon.
package struct ByteView: @unchecked Sendable {
    // The memory is an immutable read-only mapping owned by `MappedFile`, hence @unchecked.
    package let base: UnsafeRawPointer
    package let count: Int

    package init(base: UnsafeRawPointer, count: Int) {
        self.base = base
        self.count = count
    }

    @inline(__always)
    func u8(_ offset: Int) -> UInt8? {
        guard offset >= 0, offset < count else { return nil }
        return base.load(fromByteOffset: offset, as: UInt8.self)
    }

    @inline(__always)
    func u16(_ offset: Int) -> UInt16? {
        guard offset >= 0, offset <= count &- 2 else { return nil }
        return UInt16(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt16.self))
    }

    @inline(__always)
    func u32(_ offset: Int) -> UInt32? {
        guard offset >= 0, offset <= count &- 4 else { return nil }
        return UInt32(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }

    @inline(__always)
    func u64(_ offset: Int) -> UInt64? {
        guard offset >= 0, offset <= count &- 8 else { return nil }
        return UInt64(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    @inline(__always)
    func f64(_ offset: Int) -> Double? {
        u64(offset).map { Double(bitPattern: $0) }
    }

    /// The sub-range `[offset, offset + length)`, or nil when any part of it is outside.
    func slice(_ offset: Int, _ length: Int) -> ByteView? {
        guard offset >= 0, length >= 0, offset <= count, length <= count &- offset else { return nil }
        return ByteView(base: base + offset, count: length)
    }

    /// A UTF-8 string stored as a one-byte length followed by the bytes.
    func shortString(_ offset: Int) -> String? {
        guard let length = u8(offset), let bytes = slice(offset + 1, Int(length)) else { return nil }
        let buffer = UnsafeRawBufferPointer(start: bytes.base, count: bytes.count)
        return String(decoding: buffer, as: UTF8.self)
    }

    var rawBuffer: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: base, count: count) }
}
