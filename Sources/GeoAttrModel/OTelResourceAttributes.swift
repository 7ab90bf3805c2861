/// The attributes as OTEL_RESOURCE_ATTRIBUTES wants them: the `otel` format, and the one line
/// of `outputs.env_file`, which sets that variable for a collector or an SDK (the `env` format's
/// GEO_* variables are another thing: see `GeoVariables`).
public enum OTelResourceAttributes {
    /// `key=value,...`: values percent-encoded (everything but unreserved characters), keys in a
    /// stable order.
    public static func text(_ attributes: [String: AttributeValue]) -> String {
        attributes.sorted { $0.key < $1.key }
            .map { "\($0.key)=\(percentEncoded($0.value.description))" }
            .joined(separator: ",")
    }

    /// What `outputs.env_file` holds: `OTEL_RESOURCE_ATTRIBUTES="..."` and a newline. The
    /// percent-encoded text has no character a shell or EnvironmentFile= would read in quotes.
    public static func environmentFile(_ attributes: [String: AttributeValue]) -> String {
        "OTEL_RESOURCE_ATTRIBUTES=\"\(text(attributes))\"\n"
    }

    static func percentEncoded(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = Array("0123456789ABCDEF".utf8)
                out += "%" + String(decoding: [hex[Int(byte >> 4)], hex[Int(byte & 0xF)]], as: UTF8.self)
            }
        }
        return out
    }
}
