import TestSupport
import GeoIndex
import Testing

/// A truncated, bit-flipped, wrong-version or crafted file gives a typed error or, past the
/// header checks, degraded answers: never a crash or an out-of-bounds read.
@Suite struct CorruptionTests {
    let original: [UInt8]
    let directory: String

    init() throws {
        let built = try Fixture.build()
        original = try Fixture.readBytes(built.index)
        directory = built.directory
    }

    func path(_ name: String) -> String { directory + "/" + name }

    /// Lookups that exercise every layer and grid of the fixture.
    func exercise(_ reader: GeoIndexReader) {
        let anchors: [(Double, Double)] = [(0.3, 1.98), (0.6, 0.6), (1.5, 1.0), (11, 10.5), (-16.5, 179.95), (2.004, 1.0)]
        for i in 0..<400 {
            let (lat, lon) = anchors[i % anchors.count]
            _ = reader.place(latitude: lat + Double(i % 7) * 0.01, longitude: lon - Double(i % 5) * 0.01)
        }
    }

    @Test func truncatedAtManyOffsetsIsATypedError() throws {
        var offsets = Array(0..<200)
        offsets += stride(from: 200, to: original.count, by: max(1, original.count / 300)).map { $0 }
        offsets.append(original.count - 1)
        for offset in offsets {
            try Fixture.writeBytes(Array(original[..<offset]), to: path("truncated.gidx"))
            #expect(throws: GeoIndexError.self, "truncated at \(offset)") { try GeoIndexReader(path: path("truncated.gidx")) }
        }
    }

    @Test func headerBitFlipsAreDetected() throws {
        for bit in stride(from: 0, to: 64 * 8 + 11 * 24 * 8, by: 3) {
            var bytes = original
            bytes[bit / 8] ^= 1 << UInt8(bit % 8)
            try Fixture.writeBytes(bytes, to: path("flipped.gidx"))
            #expect(throws: GeoIndexError.self, "bit \(bit)") { try GeoIndexReader(path: path("flipped.gidx")) }
        }
    }

    @Test func contentBitFlipsNeverCrashAndFailVerification() throws {
        var generator: UInt64 = 99
        for round in 0..<60 {
            var bytes = original
            for _ in 0..<(1 + round % 8) {
                generator = generator &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                let position = 64 + Int(generator >> 33) % (bytes.count - 64)
                bytes[position] ^= UInt8(truncatingIfNeeded: generator >> 7) | 1
            }
            try Fixture.writeBytes(bytes, to: path("fuzzed.gidx"))
            // Flips inside the section directory are caught at open; the rest only by verification.
            guard let reader = try? GeoIndexReader(path: path("fuzzed.gidx")) else { continue }
            exercise(reader)
            #expect(throws: GeoIndexError.self) { try reader.verifyContents() }
        }
    }

    @Test func craftedContentWithValidChecksumsNeverCrashes() throws {
        // Overwrite whole stretches with hostile patterns and re-sign the file, as an attacker
        // who knows the checksum could: every offset must still be bounds-checked.
        let patterns: [UInt8] = [0xFF, 0x00, 0x7F, 0x80, 0x41]
        var generator: UInt64 = 7
        for round in 0..<80 {
            var bytes = original
            generator = generator &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let start = 64 + 11 * 24 + Int(generator >> 33) % (bytes.count - 400)
            let length = 1 + Int(generator >> 20) % 300
            for i in start..<min(start + length, bytes.count) {
                bytes[i] = round % 2 == 0 ? patterns[round / 2 % patterns.count] : UInt8(truncatingIfNeeded: generator >> UInt64(i % 50))
            }
            Fixture.setChecksums(&bytes)
            try Fixture.writeBytes(bytes, to: path("crafted.gidx"))
            guard let reader = try? GeoIndexReader(path: path("crafted.gidx")) else { continue }
            exercise(reader)
            try reader.verifyContents()
        }
    }

    @Test func craftedSectionOffsetIsACorruptError() throws {
        var bytes = original
        // First directory entry's offset points past the end.
        let entry = IndexFormat.headerSize
        for i in 0..<8 { bytes[entry + 8 + i] = 0xFF }
        Fixture.setChecksums(&bytes)
        try Fixture.writeBytes(bytes, to: path("offset.gidx"))
        #expect(throws: GeoIndexError.self) { try GeoIndexReader(path: path("offset.gidx")) }
    }

    @Test func wrongVersionIsReported() throws {
        var bytes = original
        bytes[IndexFormat.Header.version] = 9
        Fixture.setChecksums(&bytes)
        try Fixture.writeBytes(bytes, to: path("version.gidx"))
        #expect(throws: GeoIndexError.unsupportedVersion(path: path("version.gidx"), found: 9, supported: IndexFormat.version)) {
            try GeoIndexReader(path: path("version.gidx"))
        }
    }

    @Test func foreignAndMissingFilesAreTypedErrors() throws {
        try Fixture.write(String(repeating: "not an index at all ", count: 10), to: path("foreign.gidx"))
        #expect(throws: GeoIndexError.notAnIndex(path: path("foreign.gidx"))) { try GeoIndexReader(path: path("foreign.gidx")) }
        try Fixture.write("", to: path("empty.gidx"))
        #expect(throws: GeoIndexError.self) { try GeoIndexReader(path: path("empty.gidx")) }
        #expect(throws: GeoIndexError.self) { try GeoIndexReader(path: path("missing.gidx")) }
        let message = String(describing: GeoIndexError.unsupportedVersion(path: "x", found: 2, supported: 1))
        #expect(message.contains("rebuild"))
    }
}
