/// Postal codes stored as numbers. Most countries write every code the same way: the same
/// length, digits in the same places, the same letters and separators between them (`####-###`
/// in Portugal, `###-####` in Japan). For such a country the index stores that shape once and
/// each code as the number its digits spell, in the 24 bits that otherwise hold a string offset:
/// no string per code. Seven digits fit (10^7 < 2^24); a country with more, or with codes of more
/// than one shape, keeps its codes as strings.
package enum PostalCodeShape {
    /// Stands for one digit in a shape. Never part of a code: a code holding it has no shape.
    package static let digit = UInt8(ascii: "#")
    package static let maximumDigits = 7

    /// The code with each digit replaced by `#`, or nil when it cannot be stored as a number
    /// (no digit, more than seven, non-ASCII, or a `#` of its own).
    package static func shape(of code: String) -> [UInt8]? {
        var shape: [UInt8] = []
        var digits = 0
        for byte in code.utf8 {
            guard byte < 0x80, byte != digit else { return nil }
            if byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") {
                digits += 1
                shape.append(digit)
            } else {
                shape.append(byte)
            }
        }
        guard digits > 0, digits <= maximumDigits, shape.count <= Int(UInt8.max) else { return nil }
        return shape
    }

    /// The number the code's digits spell, in order ("1000-001" gives 1000001).
    package static func value(of code: String) -> UInt32 {
        var value: UInt32 = 0
        for byte in code.utf8 where byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") {
            value = value &* 10 &+ UInt32(byte - UInt8(ascii: "0"))
        }
        return value
    }

    /// The code a shape and a number spell, with leading zeros; nil when the number has more
    /// digits than the shape (only a crafted file holds one).
    package static func code(shape: some Collection<UInt8>, value: UInt32) -> String? {
        let digits = shape.count { $0 == digit }
        guard digits <= maximumDigits else { return nil }
        var limit: UInt32 = 1
        for _ in 0..<digits { limit *= 10 }
        guard value < limit else { return nil }
        var bytes = Array(shape)
        var rest = value
        for index in bytes.indices.reversed() where bytes[index] == digit {
            bytes[index] = UInt8(ascii: "0") + UInt8(rest % 10)
            rest /= 10
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
