import GeoAttrModel
import Testing
import TestSupport

@testable import GeoAttrServer

/// The env and Prometheus encoders against random strings built from the characters that break
/// naive escaping: each must come back exactly from its real reader, once normalised (control
/// characters removed from the env file, which an environment cannot carry).
@Suite("escaping round trips")
struct EscapingRoundTripTests {
    /// Quotes, shell specials, combining marks (a quote followed by one is a different Swift
    /// Character), separators, controls, non-Latin letters, U+FFFD and an emoji.
    static let alphabet: [Unicode.Scalar] = [
        "a", "Z", "0", " ", "\"", "'", "`", "$", "\\", "\n", "\r", "\t", "\u{0}", "\u{7F}", "=", ",", "%", ";", "(", ")", "{", "}",
        "!", "*", "?", "~", "#", "&", "|", "<", ">", "\u{301}", "\u{308}", "\u{200D}", "ū", "ł", "ã", "ß", "\u{627}", "\u{644}",
        "\u{FFFD}", "\u{1F30D}", "\u{E9}", "-", ".", "_", "/",
    ]

    static func randomStrings(count: Int, seed: UInt64) -> [String] {
        var random = SplitMix64(seed: seed)
        return (0..<count).map { _ in
            let length = Int(random.next() % 12)
            var scalars = String.UnicodeScalarView()
            for _ in 0..<length { scalars.append(alphabet[Int(random.next() % UInt64(alphabet.count))]) }
            return String(scalars)
        }
    }

    /// What an environment can carry of a value: everything but control characters.
    static func envNormalised(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F }))
    }

    @Test("the env file, sourced by bash and by dash, gives back every value exactly", arguments: ["/bin/bash", "/bin/dash"])
    func envRoundTrip(shell: String) async throws {
        let values = Self.randomStrings(count: 400, seed: 0x656E_76)
        var attributes: [String: AttributeValue] = [:]
        for (index, value) in values.enumerated() { attributes["t.v\(index)"] = .string(value) }
        let directory = try TemporaryDirectory(prefix: "escaping")
        let file = try directory.write(AttributeRenderer.env(attributes), to: "geo.env")
        // Each value between two markers, so that leading and trailing spaces count.
        let printing = values.indices.map { "printf '<%s>\\n' \"$T_V\($0)\"" }.joined(separator: "\n")
        let script = try directory.write(". \"$1\"\n\(printing)\n", to: "print.sh")
        let result = try await CommandResult.run(shell, [script, file])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        #expect(lines.count == values.count)
        var mismatches = 0
        for (line, value) in zip(lines, values) where String(line) != "<\(Self.envNormalised(value))>" {
            mismatches += 1
            if mismatches <= 3 { Issue.record("\(shell) read \(line.debugDescription) for \(value.debugDescription)") }
        }
        #expect(mismatches == 0)
    }

    @Test("a label value escapes the quote and backslash before a combining mark")
    func labelEscapesScalars() {
        #expect(AttributeRenderer.escapedLabel("a\"\u{301}b") == "a\\\"\u{301}b")
        #expect(AttributeRenderer.escapedLabel("\\\u{308}\n") == "\\\\\u{308}\\n")
    }

    @Test("the env file escapes a backquote, dollar and quote before a combining mark")
    func envEscapesScalars() {
        let line = AttributeRenderer.env(["geo.locality.name": .string("`\u{301}$\u{301}\"\u{301}")])
        #expect(line == "GEO_LOCALITY_NAME=\"\\`\u{301}\\$\u{301}\\\"\u{301}\"\n")
    }
}
