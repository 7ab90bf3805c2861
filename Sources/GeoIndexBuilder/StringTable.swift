/// Interned strings with a one-byte length prefix (longer strings are cut at a character boundary).
struct StringTable {
    private(set) var data: [UInt8] = []
    private var offsets: [String: UInt32] = [:]

    mutating func offset(of string: String) -> UInt32 {
        if let offset = offsets[string] { return offset }
        var bytes = Array(string.utf8)
        if bytes.count > 255 {
            var end = 255
            while end > 0, bytes[end] & 0xC0 == 0x80 { end -= 1 }
            bytes = Array(bytes[..<end])
        }
        let offset = UInt32(data.count)
        data.append(UInt8(bytes.count))
        data.append(contentsOf: bytes)
        offsets[string] = offset
        return offset
    }
}
