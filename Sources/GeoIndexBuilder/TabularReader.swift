#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Tab-separated files (GeoNames dumps): calls `body` with the fields of each line.
enum TabularReader {
    static func forEachLine(
        path: String, _ body: (_ line: Int, _ fields: [ArraySlice<UInt8>], _ bytes: [UInt8]) throws(BuildError) -> Void
    ) throws(BuildError) {
        let bytes = try FileIO.readTerminated(path)
        let end = bytes.count - 1  // terminating NUL
        var lineStart = 0
        var lineNumber = 0
        var fields: [ArraySlice<UInt8>] = []
        while lineStart < end {
            lineNumber += 1
            var lineEnd = lineStart
            while lineEnd < end, bytes[lineEnd] != 0x0A { lineEnd += 1 }
            fields.removeAll(keepingCapacity: true)
            if lineEnd > lineStart, bytes[lineStart] != UInt8(ascii: "#") {
                var fieldStart = lineStart
                for i in lineStart...lineEnd where i == lineEnd || bytes[i] == 0x09 {
                    var fieldEnd = i
                    if fieldEnd > fieldStart, bytes[fieldEnd - 1] == 0x0D { fieldEnd -= 1 }
                    fields.append(bytes[fieldStart..<fieldEnd])
                    fieldStart = i + 1
                }
                try body(lineNumber, fields, bytes)
            }
            lineStart = lineEnd + 1
        }
    }

    static func string(_ field: ArraySlice<UInt8>) -> String {
        String(decoding: field, as: UTF8.self)
    }

    /// Parses a decimal number; the field must be followed by a tab, newline or the final NUL.
    static func double(_ field: ArraySlice<UInt8>, in bytes: [UInt8]) -> Double? {
        guard !field.isEmpty else { return nil }
        return bytes.withUnsafeBufferPointer { buffer -> Double? in
            guard let base = buffer.baseAddress else { return nil }
            return base.withMemoryRebound(to: CChar.self, capacity: buffer.count) { chars -> Double? in
                var end: UnsafeMutablePointer<CChar>?
                let start = chars + field.startIndex
                let value = strtod(start, &end)
                guard let end, start.distance(to: end) == field.count, value.isFinite else { return nil }
                return value
            }
        }
    }

    static func integer(_ field: ArraySlice<UInt8>) -> Int? {
        guard !field.isEmpty, field.count <= 18 else { return nil }
        var value = 0
        for byte in field {
            guard byte >= 0x30, byte <= 0x39 else { return nil }
            value = value * 10 + Int(byte - 0x30)
        }
        return value
    }
}
