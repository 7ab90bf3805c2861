/// Attribute values built to break naive escaping, shared by the Swift round-trip tests and the
/// `escaping-corpus` tool that hands the same values to the readers outside Swift (systemd,
/// python-dotenv, the OpenTelemetry SDK).
///
/// A value starts as bytes, because that is how a place name reaches geoattrd (the index's
/// strings, the builder's sources): random pieces that are each a scalar's UTF-8 or a sequence
/// that is no UTF-8 at all (encoded surrogates, overlong forms, truncated sequences, stray
/// continuation bytes). The encoders see them decoded as every ingress decodes them:
/// `String(decoding:as: UTF8.self)`, each maximal invalid subpart one U+FFFD.
public enum EscapingCorpus {
    /// Quotes, shell specials, combining marks (a quote followed by one is a different Swift
    /// Character), separators, controls with NUL, a line separator, a byte order mark,
    /// noncharacters (valid scalars that some readers refuse), non-Latin letters, U+FFFD and an
    /// emoji.
    public static let scalars: [Unicode.Scalar] = [
        "a", "Z", "0", " ", "\"", "'", "`", "$", "\\", "\n", "\r", "\t", "\u{0}", "\u{1B}", "\u{7F}", "\u{85}", "\u{A0}", "=",
        ",", "%", ";", "(", ")", "{", "}", "!", "*", "?", "~", "#", "&", "|", "<", ">", "\u{301}", "\u{308}", "\u{200D}", "\u{2028}",
        "\u{FEFF}", "ū", "ł", "ã", "ß", "\u{627}", "\u{644}", "\u{FFFD}", "\u{1F30D}", "\u{E9}", "-", ".", "_", "/", "+",
    ] + ([0xFDD0, 0xFFFE, 0x10FFFF] as [UInt32]).compactMap { Unicode.Scalar($0) }  // literals cannot spell noncharacters

    /// Byte sequences that are not UTF-8: the surrogates U+D800 and U+DFFF as CESU-8 writes them,
    /// an overlong NUL, a four-byte sequence cut after two bytes, a byte never used in UTF-8, a
    /// continuation byte alone, and a sequence past U+10FFFF.
    public static let invalidUTF8: [[UInt8]] = [
        [0xED, 0xA0, 0x80], [0xED, 0xBF, 0xBF], [0xC0, 0x80], [0xF0, 0x9F], [0xFF], [0x80], [0xF4, 0x90, 0x80, 0x80],
    ]

    /// Values whose shape matters more than their letters: empty, only a backslash, ending in one,
    /// spaces at either end, what a shell or an interpolating reader would expand, separators of
    /// the OTel format, an escape another reader might decode.
    public static let shapes: [String] = [
        "", "\\", "a\\", "\\\\", " a ", "  ", "${HOME}", "$HOME", "$(id)", "`id`", "${A:-b}", "\\$", "\\\"", "%00", "%41",
        "a=b,c=d", "a\\nb", "'", "'\\''", "#x", "x #y", "\u{0}", "\n", "é\u{301}\"\u{301}",
    ]

    /// `count` byte strings of up to 15 pieces, one piece in eight not UTF-8.
    public static func inputs(count: Int, seed: UInt64) -> [[UInt8]] {
        var random = SplitMix64(seed: seed)
        return (0..<count).map { _ in
            var bytes: [UInt8] = []
            for _ in 0..<Int(random.next() % 16) {
                if random.next() % 8 == 0 {
                    bytes += invalidUTF8[Int(random.next() % UInt64(invalidUTF8.count))]
                } else {
                    bytes += Array(String(Character(scalars[Int(random.next() % UInt64(scalars.count))])).utf8)
                }
            }
            return bytes
        }
    }

    /// The values the encoders are given: the shapes, then `count` random inputs decoded.
    public static func values(count: Int, seed: UInt64) -> [String] {
        shapes + inputs(count: count, seed: seed).map { String(decoding: $0, as: UTF8.self) }
    }

    /// What the env format carries of a value, as clients.md defines it: the C0 controls (U+0000
    /// to U+001F) and U+007F removed, Unicode's noncharacters (U+FDD0 to U+FDEF and the last two
    /// code points of every plane) replaced by U+FFFD. Written from the definition, not from the
    /// encoder's code.
    public static func envNormalised(_ text: String) -> String {
        var kept = String.UnicodeScalarView()
        for scalar in text.unicodeScalars where scalar.value >= 0x20 && scalar.value != 0x7F {
            let noncharacter = (0xFDD0...0xFDEF).contains(scalar.value) || scalar.value & 0xFFFE == 0xFFFE
            kept.append(noncharacter ? "\u{FFFD}" : scalar)
        }
        return String(kept)
    }
}
