import GeoAttrModel
import GeoPlaces

/// One-line JSON for a lookup result, keyed by the OpenTelemetry attribute names.
/// Unknown attributes are left out, never written as empty strings.
public enum PlaceJSON {
    public static func append(_ place: GeoPlace, latitude: Double, longitude: Double, to out: inout [UInt8]) {
        out.append(contentsOf: #"{"lat":"#.utf8)
        out.append(contentsOf: String(latitude).utf8)
        out.append(contentsOf: #","lon":"#.utf8)
        out.append(contentsOf: String(longitude).utf8)
        appendAttributes(place, to: &out)
    }

    /// Same, echoing the coordinates as the caller wrote them (already valid JSON numbers):
    /// `lookup --batch` saves formatting two doubles per line.
    static func append(
        _ place: GeoPlace, latitudeText: Slice<UnsafeBufferPointer<UInt8>>, longitudeText: Slice<UnsafeBufferPointer<UInt8>>,
        to out: inout [UInt8]
    ) {
        out.append(contentsOf: #"{"lat":"#.utf8)
        out.append(contentsOf: latitudeText)
        out.append(contentsOf: #","lon":"#.utf8)
        out.append(contentsOf: longitudeText)
        appendAttributes(place, to: &out)
    }

    /// True when `text` is a number in JSON's grammar (no '+', no leading zeros, digits around '.').
    static func isJSONNumber<Text: Collection<UInt8>>(_ text: Text) -> Bool where Text.Index == Int {
        var i = text.startIndex
        func digits() -> Int {
            let start = i
            while i < text.endIndex, text[i] >= 0x30, text[i] <= 0x39 { i += 1 }
            return i - start
        }
        if i < text.endIndex, text[i] == UInt8(ascii: "-") { i += 1 }
        guard i < text.endIndex else { return false }
        if text[i] == 0x30 {
            i += 1
        } else if digits() == 0 {
            return false
        }
        if i < text.endIndex, text[i] == UInt8(ascii: ".") {
            i += 1
            guard digits() > 0 else { return false }
        }
        if i < text.endIndex, text[i] == UInt8(ascii: "e") || text[i] == UInt8(ascii: "E") {
            i += 1
            if i < text.endIndex, text[i] == UInt8(ascii: "+") || text[i] == UInt8(ascii: "-") { i += 1 }
            guard digits() > 0 else { return false }
        }
        return i == text.endIndex
    }

    /// Each place attribute with its JSON key, `,"NAME":`, encoded once.
    private static let keys: [(attribute: PlaceAttribute, key: [UInt8])] = PlaceAttribute.allCases.map {
        ($0, Array(",\"\($0.name)\":".utf8))
    }

    private static func appendAttributes(_ place: GeoPlace, to out: inout [UInt8]) {
        for (attribute, key) in keys {
            guard let value = attribute.value(in: place) else { continue }
            out.append(contentsOf: key)
            string(value, &out)
        }
        if let margin = place.boundaryMarginMeters {
            out.append(contentsOf: #","boundary_margin_m":"#.utf8)
            out.append(contentsOf: String(Int(margin.rounded())).utf8)
        }
        out.append(UInt8(ascii: "}"))
    }

    public static func appendError(_ message: String, line: Int, input: some Collection<UInt8>, to out: inout [UInt8]) {
        out.append(contentsOf: #"{"error":"#.utf8)
        string(message, &out)
        out.append(contentsOf: #","line":"#.utf8)
        out.append(contentsOf: String(line).utf8)
        out.append(contentsOf: #","input":"#.utf8)
        string(String(decoding: input, as: UTF8.self), &out)
        out.append(UInt8(ascii: "}"))
    }

    public static func render(_ place: GeoPlace, latitude: Double, longitude: Double) -> String {
        var out: [UInt8] = []
        append(place, latitude: latitude, longitude: longitude, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    static func string(_ value: String, _ out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        // Names and codes almost never need escaping: copy those whole.
        if !value.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
            out.append(contentsOf: value.utf8)
            out.append(UInt8(ascii: "\""))
            return
        }
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out.append(contentsOf: #"\""#.utf8)
            case UInt8(ascii: "\\"): out.append(contentsOf: #"\\"#.utf8)
            case 0..<0x20:
                let hex: [UInt8] = Array("0123456789abcdef".utf8)
                out.append(contentsOf: #"\u00"#.utf8)
                out.append(hex[Int(byte >> 4)])
                out.append(hex[Int(byte & 0xF)])
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}
