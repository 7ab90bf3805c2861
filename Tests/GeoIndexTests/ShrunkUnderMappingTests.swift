import GeoIndex
import GeoPlaces
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// An index file that shrinks while it is open (a copy over it in place, a truncate) has pages
/// past its new end that would raise SIGBUS: the reader's mapping is guarded, so lookups there
/// read zeros and go on, and the reader says it is no longer intact.
@Suite struct ShrunkUnderMappingTests {
    /// Points in every layer and grid of the fixture.
    static let points: [(Double, Double)] = [(0.3, 1.98), (0.6, 0.6), (1.5, 1.0), (11, 10.5), (-16.5, 179.95), (2.004, 1.0)]

    /// Looks every point up a few times around its anchor; returns the countries found.
    func exercise(_ reader: GeoIndexReader) -> [String?] {
        (0..<60).map { i in
            let (latitude, longitude) = Self.points[i % Self.points.count]
            return reader.place(latitude: latitude + Double(i % 7) * 0.01, longitude: longitude - Double(i % 5) * 0.01).countryCode
        }
    }

    @Test(arguments: [0, 1, 4096, 8192])
    func lookupsAfterTheFileShrankAnswerAndSaySo(size: Int) throws {
        let path = try Fixture.build().index
        let reader = try GeoIndexReader(path: path)
        #expect(reader.place(latitude: 1.5, longitude: 1.0).countryCode == "AA")
        #expect(reader.isIntact)

        #expect(truncate(path, off_t(size)) == 0, "truncate: errno \(errno)")
        _ = exercise(reader)
        #expect(!reader.isIntact, "lookups past the new end of a \(size)-byte file")
        #expect(throws: GeoIndexError.changedUnderMapping(path: path)) { try reader.verifyContents() }
        // It stays so: the file being whole again does not make the answers read before valid.
        #expect(!reader.isIntact)
    }

    @Test func anotherIndexOpenAtTheSameTimeStaysIntactAndRight() throws {
        let shrinking = try GeoIndexReader(path: try Fixture.build().index)
        let other = try GeoIndexReader(path: try Fixture.build().index)
        let expected = exercise(other)

        #expect(truncate(shrinking.path, 4096) == 0)
        _ = exercise(shrinking)
        #expect(!shrinking.isIntact)
        #expect(exercise(other) == expected)
        #expect(other.isIntact)
    }

    @Test func aFileMadeWholeAgainOpensIntact() throws {
        let path = try Fixture.build().index
        let bytes = try Fixture.readBytes(path)
        let reader = try GeoIndexReader(path: path)
        let expected = exercise(reader)
        #expect(truncate(path, 4096) == 0)
        _ = exercise(reader)
        #expect(!reader.isIntact)

        // What a copy in place does once it has finished: the whole file again.
        let descriptor = open(path, O_WRONLY | O_TRUNC)
        #expect(descriptor >= 0)
        let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        close(descriptor)
        #expect(written == bytes.count)
        let reopened = try GeoIndexReader(path: path)
        #expect(exercise(reopened) == expected)
        #expect(reopened.isIntact)
    }

    /// Each open reader holds one of a fixed number of guard slots; a closed one gives it back.
    @Test func readersOpenedAndClosedGiveTheirGuardsBack() throws {
        let path = try Fixture.build().index
        for _ in 0..<300 {
            let reader = try GeoIndexReader(path: path)
            #expect(reader.place(latitude: 1.5, longitude: 1.0).countryCode == "AA")
        }
    }
}
