#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One column of a batch in Apache Arrow's `utf8` layout: a validity bitmap (bit set: a value),
/// `count + 1` little-endian int32 offsets into the data, and the UTF-8 bytes of the values one
/// after the other. What a caller receives are `malloc`ed copies, so that Arrow can wrap them
/// without copying and free them when its arrays go.
struct ArrowStringColumn {
    private var validity: [UInt8]
    private var offsets: [Int32]
    private var data: [UInt8] = []
    private(set) var nullCount = 0

    init(capacity: Int) {
        validity = [UInt8](repeating: 0, count: (capacity + 7) / 8)
        offsets = [0]
        offsets.reserveCapacity(capacity + 1)
        data.reserveCapacity(capacity * 8)
    }

    /// False when the data would pass the 2 GiB that int32 offsets reach.
    mutating func append(_ value: String?) -> Bool {
        let count = offsets.count - 1
        if var value {
            value.withUTF8 { data.append(contentsOf: $0) }
            guard data.count <= Int(Int32.max) else { return false }
            validity[count >> 3] |= UInt8(1) << UInt8(count & 7)
        } else {
            nullCount += 1
        }
        offsets.append(Int32(truncatingIfNeeded: data.count))
        return true
    }

    /// The three buffers, each `malloc`ed (never NULL: at least one byte), and their sizes.
    func export() -> [(pointer: UnsafeMutableRawPointer?, size: Int)] {
        [copy(validity), copy(offsets), copy(data)]
    }

    private func copy<Element>(_ array: [Element]) -> (pointer: UnsafeMutableRawPointer?, size: Int) {
        array.withUnsafeBytes { bytes in
            let pointer = malloc(max(bytes.count, 1))
            if let pointer, let base = bytes.baseAddress, bytes.count > 0 {
                memcpy(pointer, base, bytes.count)
            }
            return (pointer, pointer == nil ? 0 : bytes.count)
        }
    }
}
