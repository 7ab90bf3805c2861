#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A parsed JSON document (the builder's inputs are GeoJSON and iso-codes JSON).
indirect enum JSONValue: Sendable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    var string: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    var number: Double? {
        if case .number(let value) = self { return value }
        return nil
    }

    var array: [JSONValue]? {
        if case .array(let values) = self { return values }
        return nil
    }
}

/// A small recursive-descent JSON parser over bytes that end with a NUL (see `FileIO`).
struct JSONParser {
    private let bytes: [UInt8]
    private let path: String
    private var position = 0

    init(bytes: [UInt8], path: String) {
        self.bytes = bytes
        self.path = path
    }

    static func parse(file path: String) throws(BuildError) -> JSONValue {
        var parser = JSONParser(bytes: try FileIO.readTerminated(path), path: path)
        return try parser.parseDocument()
    }

    mutating func parseDocument() throws(BuildError) -> JSONValue {
        let value = try parseValue(depth: 0)
        skipWhitespace()
        guard position >= bytes.count - 1 else { throw error("trailing characters after the document") }
        return value
    }

    private func error(_ detail: String) -> BuildError {
        .malformedJSON(path: path, offset: position, detail: detail)
    }

    private mutating func skipWhitespace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x0A, 0x0D, 0x09: position += 1
            default: return
            }
        }
    }

    private var current: UInt8 { position < bytes.count ? bytes[position] : 0 }

    private mutating func parseValue(depth: Int) throws(BuildError) -> JSONValue {
        guard depth < 64 else { throw error("nesting deeper than 64 levels") }
        skipWhitespace()
        switch current {
        case UInt8(ascii: "{"):
            position += 1
            var members: [String: JSONValue] = [:]
            skipWhitespace()
            if current == UInt8(ascii: "}") {
                position += 1
                return .object(members)
            }
            while true {
                skipWhitespace()
                guard current == UInt8(ascii: "\"") else { throw error("expected a member name") }
                let key = try parseString()
                skipWhitespace()
                guard current == UInt8(ascii: ":") else { throw error("expected ':'") }
                position += 1
                members[key] = try parseValue(depth: depth + 1)
                skipWhitespace()
                if current == UInt8(ascii: ",") {
                    position += 1
                } else if current == UInt8(ascii: "}") {
                    position += 1
                    return .object(members)
                } else {
                    throw error("expected ',' or '}'")
                }
            }
        case UInt8(ascii: "["):
            position += 1
            var values: [JSONValue] = []
            skipWhitespace()
            if current == UInt8(ascii: "]") {
                position += 1
                return .array(values)
            }
            while true {
                values.append(try parseValue(depth: depth + 1))
                skipWhitespace()
                if current == UInt8(ascii: ",") {
                    position += 1
                } else if current == UInt8(ascii: "]") {
                    position += 1
                    return .array(values)
                } else {
                    throw error("expected ',' or ']'")
                }
            }
        case UInt8(ascii: "\""):
            return .string(try parseString())
        case UInt8(ascii: "t"):
            try expectLiteral("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try expectLiteral("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try expectLiteral("null")
            return .null
        default:
            return .number(try parseNumber())
        }
    }

    private mutating func expectLiteral(_ literal: String) throws(BuildError) {
        let expected = Array(literal.utf8)
        guard position + expected.count <= bytes.count, bytes[position..<(position + expected.count)].elementsEqual(expected) else {
            throw error("unexpected token")
        }
        position += expected.count
    }

    private mutating func parseNumber() throws(BuildError) -> Double {
        let start = position
        var end: UnsafeMutablePointer<CChar>?
        let value = bytes.withUnsafeBufferPointer { buffer -> Double in
            guard let base = buffer.baseAddress else { return 0 }
            return base.withMemoryRebound(to: CChar.self, capacity: buffer.count) { chars in
                let result = strtod(chars + start, &end)
                if let end { position = chars.distance(to: end) }
                return result
            }
        }
        guard position > start, value.isFinite else { throw error("expected a value") }
        return value
    }

    private mutating func parseString() throws(BuildError) -> String {
        position += 1  // opening quote
        var scalars: [UInt8] = []
        let start = position
        // Fast path: no escapes.
        while position < bytes.count, bytes[position] != UInt8(ascii: "\""), bytes[position] != UInt8(ascii: "\\") {
            position += 1
        }
        if position < bytes.count, bytes[position] == UInt8(ascii: "\"") {
            let text = String(decoding: bytes[start..<position], as: UTF8.self)
            position += 1
            return text
        }
        scalars.append(contentsOf: bytes[start..<position])
        while position < bytes.count {
            let byte = bytes[position]
            position += 1
            if byte == UInt8(ascii: "\"") { return String(decoding: scalars, as: UTF8.self) }
            guard byte == UInt8(ascii: "\\") else {
                scalars.append(byte)
                continue
            }
            let escape = current
            position += 1
            switch escape {
            case UInt8(ascii: "n"): scalars.append(0x0A)
            case UInt8(ascii: "t"): scalars.append(0x09)
            case UInt8(ascii: "r"): scalars.append(0x0D)
            case UInt8(ascii: "b"): scalars.append(0x08)
            case UInt8(ascii: "f"): scalars.append(0x0C)
            case UInt8(ascii: "u"):
                var code = try parseHex4()
                // A high surrogate is half of a scalar only with a low one escaped right after it;
                // anything else after it is read on its own, and the lone half becomes U+FFFD.
                if (0xD800..<0xDC00).contains(code), current == UInt8(ascii: "\\"), position + 1 < bytes.count,
                    bytes[position + 1] == UInt8(ascii: "u")
                {
                    let next = position
                    position += 2
                    let low = try parseHex4()
                    if (0xDC00..<0xE000).contains(low) {
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    } else {
                        position = next
                    }
                }
                let scalar = Unicode.Scalar(code) ?? "\u{FFFD}"
                scalars.append(contentsOf: Array(String(Character(scalar)).utf8))
            default: scalars.append(escape)
            }
        }
        throw error("unterminated string")
    }

    private mutating func parseHex4() throws(BuildError) -> UInt32 {
        guard position + 4 <= bytes.count else { throw error("truncated \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let c = bytes[position]
            position += 1
            let digit: UInt32
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(c - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(c - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(c - UInt8(ascii: "A") + 10)
            default: throw error("invalid \\u escape")
            }
            value = value << 4 | digit
        }
        return value
    }
}
