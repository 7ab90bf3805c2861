import FoundationEssentials

/// The API's JSON: keys sorted, so that an answer's bytes (and its entity tag's worth) depend
/// on its content alone, and `/` left as it is.
public enum APIJSON {
    public static func encode(_ value: some Encodable) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? Array(encoder.encode(value))) ?? Array("{}".utf8)
    }
}
