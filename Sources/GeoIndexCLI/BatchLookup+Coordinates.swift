extension BatchLookup {
    /// `lat,lon` read as `--batch` reads a line; `nil` when it is not two numbers.
    public static func coordinates(_ text: String) -> (latitude: Double, longitude: Double)? {
        parseCoordinates(Array(text.utf8)[...]).map { ($0.latitude, $0.longitude) }
    }

    /// Parses `lat,lon` (spaces allowed around either number); also returns the two trimmed
    /// fields, which the output echoes when they are JSON numbers already.
    static func parseCoordinates<Text: BidirectionalCollection<UInt8>>(
        _ line: Text
    ) -> (latitude: Double, longitude: Double, latitudeText: Text, longitudeText: Text)? where Text.SubSequence == Text, Text.Index == Int {
        guard let (latitudeText, longitudeText) = fields(line), let latitude = parseNumber(latitudeText),
            let longitude = parseNumber(longitudeText)
        else { return nil }
        return (latitude, longitude, latitudeText, longitudeText)
    }

    /// The two trimmed fields around the first comma; nil without one.
    static func fields<Text: BidirectionalCollection<UInt8>>(_ line: Text) -> (Text, Text)? where Text.SubSequence == Text {
        guard let comma = line.firstIndex(of: UInt8(ascii: ",")) else { return nil }
        return (trim(line[line.startIndex..<comma]), trim(line[line.index(after: comma)...]))
    }

    private static func trim<Text: BidirectionalCollection<UInt8>>(_ field: Text) -> Text where Text.SubSequence == Text {
        var trimmed = field
        while let first = trimmed.first, first == 0x20 || first == 0x09 { trimmed = trimmed.dropFirst() }
        while let last = trimmed.last, last == 0x20 || last == 0x09 { trimmed = trimmed.dropLast() }
        return trimmed
    }

    /// A number as `Double(String)` reads it, without making a String for the common case.
    static func parseNumber<Text: Collection<UInt8>>(_ trimmed: Text) -> Double? where Text.Index == Int {
        guard !trimmed.isEmpty, trimmed.count < 64 else { return nil }
        if let exact = exactDecimal(trimmed) { return exact }
        return Double(String(decoding: trimmed, as: UTF8.self))
    }

    /// Exact powers of ten: every one up to 1e22 is a Double without rounding.
    private static let powersOfTen: [Double] = (0...22).map { exponent in
        (0..<exponent).reduce(1.0) { value, _ in value * 10 }
    }

    /// `[-]digits[.digits]` with at most 15 significant digits and at most 22 after the point, the
    /// shape of almost every coordinate: the digits as an integer, divided by a power of ten.
    /// Both are exact Doubles, and IEEE division rounds the quotient correctly, so the result is
    /// the one strtod gives (Clinger's fast path). Anything else returns nil, for strtod.
    static func exactDecimal<Text: Collection<UInt8>>(_ text: Text) -> Double? where Text.Index == Int {
        guard let first = text.first else { return nil }
        var index = text.startIndex
        let negative = first == UInt8(ascii: "-")
        if negative { index += 1 }
        var mantissa: UInt64 = 0
        var digits = 0
        var fractionDigits = 0
        var seenPoint = false
        var seenDigit = false
        while index < text.endIndex {
            let byte = text[index]
            if byte >= 0x30 && byte <= 0x39 {
                seenDigit = true
                if mantissa != 0 || byte != 0x30 { digits += 1 }
                guard digits <= 15 else { return nil }
                mantissa = mantissa * 10 + UInt64(byte - 0x30)
                if seenPoint { fractionDigits += 1 }
            } else if byte == UInt8(ascii: "."), !seenPoint {
                seenPoint = true
            } else {
                return nil
            }
            index += 1
        }
        guard seenDigit, fractionDigits < powersOfTen.count else { return nil }
        let magnitude = Double(mantissa) / powersOfTen[fractionDigits]
        return negative ? -magnitude : magnitude
    }
}
