import GeoIndex
import GeoPlaces
import Testing
import TestSupport

@testable import GeoIndexBuilder

/// Text that is not Unicode where it enters (the index's strings, the builder's JSON sources)
/// becomes U+FFFD there, one for each maximal invalid subpart, as clients.md says: every format
/// then carries U+FFFD and nothing else of it. The expected strings are written out from the
/// Unicode Standard's substitution practice, not computed by the decoder under test.
@Suite struct InvalidUTF8Tests {
    @Test("a locality name that is not UTF-8 in the index is read with U+FFFD for each maximal invalid subpart")
    func indexStringIsReplaced() throws {
        let placeholder = Array("Qxqxqxqxqxqx".utf8)
        let built = try Fixture.build(extraCities: [Fixture.place(100, "Qxqxqxqxqxqx", 0.3, 1.7, "AA", 50_000)])
        #expect(try GeoIndexReader(path: built.index).place(latitude: 0.3, longitude: 1.7).localityName == "Qxqxqxqxqxqx")
        // Twelve bytes, as many as the name's: U+D800 and U+DFFF as CESU-8 writes them (three
        // each: ED takes only 80-9F next), an overlong NUL (two), a four-byte sequence cut after
        // two bytes (one), a byte never in UTF-8 (one), and a letter.
        let invalid: [UInt8] = [0xED, 0xA0, 0x80, 0xED, 0xBF, 0xBF, 0xC0, 0x80, 0xF0, 0x9F, 0xFF, 0x41]
        var bytes = try Fixture.readBytes(built.index)
        var patched = 0
        var start = 0
        while let at = Self.firstIndex(of: placeholder, in: bytes, from: start) {
            bytes.replaceSubrange(at..<(at + placeholder.count), with: invalid)
            patched += 1
            start = at + placeholder.count
        }
        #expect(patched >= 1)
        Fixture.setChecksums(&bytes)
        let path = built.directory + "/invalid-name.gidx"
        try Fixture.writeBytes(bytes, to: path)
        let reader = try GeoIndexReader(path: path)
        try reader.verifyContents()
        let name = reader.place(latitude: 0.3, longitude: 1.7).localityName
        #expect(name == String(repeating: "\u{FFFD}", count: 10) + "A")
    }

    static func firstIndex(of needle: [UInt8], in bytes: [UInt8], from start: Int) -> Int? {
        guard bytes.count >= needle.count, start <= bytes.count - needle.count else { return nil }
        return (start...(bytes.count - needle.count)).first { bytes[$0..<($0 + needle.count)].elementsEqual(needle) }
    }

    @Test(
        "a lone surrogate escaped in a JSON source becomes U+FFFD and what follows it is read on its own",
        arguments: [
            (#""\ud800\u0041""#, "\u{FFFD}A"),
            (#""\ud800\n""#, "\u{FFFD}\n"),
            (#""\udc00\ud800""#, "\u{FFFD}\u{FFFD}"),
            (#""\ud83c\udf0d""#, "\u{1F30D}"),
            (#""\ud800\ud83c\udf0dx""#, "\u{FFFD}\u{1F30D}x"),
            (#""a\ud800""#, "a\u{FFFD}"),
        ])
    func jsonSurrogates(source: String, expected: String) throws {
        var parser = JSONParser(bytes: Array(source.utf8) + [0], path: "test.json")
        #expect(try parser.parseDocument().string == expected)
    }
}
