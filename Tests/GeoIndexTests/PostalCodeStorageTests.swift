import GeoIndex
import GeoPlaces
import TestSupport
import Testing

/// How postal codes are stored: as numbers in their country's shape where every code of the
/// country has one, and one record per stored position, country and region.
@Suite struct PostalCodeStorageTests {
    @Test(arguments: [
        ("1000-001", "####-###", 1_000_001 as UInt32),
        ("001-0001", "###-####", 10_001),
        ("AD100", "AD###", 100),
        ("0", "#", 0),
        ("SE 123 45", "SE ### ##", 12_345),
    ])
    func aCodeIsItsShapeAndItsNumber(code: String, shape: String, value: UInt32) throws {
        #expect(PostalCodeShape.shape(of: code) == Array(shape.utf8))
        #expect(PostalCodeShape.value(of: code) == value)
        #expect(PostalCodeShape.code(shape: Array(shape.utf8), value: value) == code)
    }

    @Test(arguments: ["ABC", "", "12345678", "12345 67890", "1#2", "12–34", "Ö12"])
    func aCodeThatCannotBeANumberHasNoShape(code: String) {
        #expect(PostalCodeShape.shape(of: code) == nil)
    }

    @Test func aNumberLongerThanItsShapeGivesNoCode() {
        #expect(PostalCodeShape.code(shape: Array("A-##".utf8), value: 100) == nil)
        #expect(PostalCodeShape.code(shape: Array("########".utf8), value: 1) == nil)
        #expect(PostalCodeShape.code(shape: Array("A-##".utf8), value: 99) == "A-99")
    }

    @Test func leadingZerosSurviveTheNumber() throws {
        let built = try Fixture.build(extraPostalCodes: [Fixture.postal("AA", "A-007", "Oh Seven", 0.8, 0.8)])
        let reader = try GeoIndexReader(path: built.index)
        #expect(reader.place(latitude: 0.8, longitude: 0.8).postalCode == "A-007")
        #expect(reader.place(latitude: 1.5, longitude: 1.0).postalCode == "A-100")
    }

    @Test func aCountryWithOneShapeStoresNoStringsForItsCodesAndOneWithTwoShapesDoes() throws {
        let built = try Fixture.build(extraPostalCodes: [Fixture.postal("BB", "B-2X", "Exception", 0.3, 2.3)])
        let bytes = try Fixture.readBytes(built.index)
        #expect(!Self.contains(bytes, "A-100"), "AA's codes all read A-###: numbers, no strings")
        #expect(Self.contains(bytes, "A-###"))
        #expect(Self.contains(bytes, "B-1") && Self.contains(bytes, "B-2X"), "BB has two shapes: strings")
        let reader = try GeoIndexReader(path: built.index)
        #expect(reader.place(latitude: 0.3, longitude: 2.05).postalCode == "B-1")
        #expect(reader.place(latitude: 0.3, longitude: 2.3).postalCode == "B-2X")
        #expect(reader.place(latitude: 1.5, longitude: 1.05).postalCode == "A-101")
    }

    @Test func ofCodesAtOneStoredPositionOnlyTheFirstIsKeptAndAnswers() throws {
        let first = Fixture.postal("AA", "A-300", "First", 0.82, 0.82)
        // 11 m away: the same stored position (a step is 44 m).
        let second = Fixture.postal("AA", "A-301", "Second", 0.82, 0.8201)
        let both = try Fixture.build(extraPostalCodes: [first, second])
        let firstOnly = try Fixture.build(extraPostalCodes: [first])
        let reversed = try Fixture.build(extraPostalCodes: [second, first])
        #expect(try GeoIndexReader(path: both.index).place(latitude: 0.82, longitude: 0.82).postalCode == "A-300")
        #expect(try GeoIndexReader(path: reversed.index).place(latitude: 0.82, longitude: 0.82).postalCode == "A-301")
        #expect(try Self.postalRecordCount(both.index) == Self.postalRecordCount(firstOnly.index))
        let counts = try GeoIndexReader(path: both.index).info.counts
        #expect(counts.contains { $0.name == "postal centroids" && $0.value.contains("1 at the stored position of an equal one left out") })
        // Another country at the same position is another answer: both stay.
        let neighbour = try Fixture.build(extraPostalCodes: [first, Fixture.postal("BB", "B-3", "Across", 0.82, 0.8201)])
        #expect(try Self.postalRecordCount(neighbour.index) == Self.postalRecordCount(firstOnly.index) + 1)
    }

    @Test func aCraftedShapeTableOmitsTheCodeAndKeepsTheRest() throws {
        let built = try Fixture.build()
        let original = try Fixture.readBytes(built.index)
        let shapes = try #require(Fixture.sectionOffset(of: .postalShapes, in: original))
        // Every country's shape pointed past the strings; then AA's shape with too few digits
        // for its numbers.
        var beyond = original
        let countries = Int(Fixture.u32(original, shapes))
        for i in 0..<(countries * 4) { beyond[shapes + 4 + i] = 0xFE }
        var narrow = original
        let shape = try #require(Self.find(narrow, "A-###"))
        narrow[shape + 2] = UInt8(ascii: "x")
        for (name, var bytes) in [("beyond", beyond), ("narrow", narrow)] {
            Fixture.setChecksums(&bytes)
            let path = built.directory + "/\(name).gidx"
            try Fixture.writeBytes(bytes, to: path)
            let place = try GeoIndexReader(path: path).place(latitude: 1.5, longitude: 1.0)
            #expect(place.postalCode == nil, "\(name)")
            #expect(place.countryCode == "AA" && place.regionCode == "AA-N", "\(name)")
        }
    }

    static func find(_ bytes: [UInt8], _ text: String) -> Int? {
        let needle = Array(text.utf8)
        guard bytes.count >= needle.count else { return nil }
        return (0...(bytes.count - needle.count)).first { bytes[$0..<($0 + needle.count)].elementsEqual(needle) }
    }

    static func contains(_ bytes: [UInt8], _ text: String) -> Bool { find(bytes, text) != nil }

    /// The record count in the postal grid's header.
    static func postalRecordCount(_ path: String) throws -> Int {
        let bytes = try Fixture.readBytes(path)
        let post = try #require(Fixture.sectionOffset(of: .postalCodes, in: bytes))
        return Int(Fixture.u32(bytes, post + 20))
    }
}
