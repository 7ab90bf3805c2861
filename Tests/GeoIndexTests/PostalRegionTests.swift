import GeoIndex
import GeoPlaces
import TestSupport
import Testing

/// A postal code comes from the point's own region when that region has one within the cut-off,
/// even where a centroid across the region border is nearer (Bethesda, MD for a point in McLean,
/// VA was the kind of answer this replaced).
@Suite struct PostalRegionTests {
    // AA-S lies south of latitude 1, AA-N north of it (see the fixture). Along longitude 1.5:
    // A-150 at 0.98 (AA-S) and A-160 at 1.05 (AA-N), 7.7 km apart.
    static let border = [
        Fixture.postal("AA", "A-150", "Southgate", 0.98, 1.5),
        Fixture.postal("AA", "A-160", "Northgate", 1.05, 1.5),
    ]

    @Test func theCodeComesFromThePointsOwnRegion() throws {
        let reader = try GeoIndexReader(path: try Fixture.build(extraPostalCodes: Self.border).index)
        // 1.01: 3.3 km from A-150 across the border, 4.4 km from A-160 in its own region.
        let north = reader.place(latitude: 1.01, longitude: 1.5)
        #expect(north.regionCode == "AA-N")
        #expect(north.postalCode == "A-160")
        let south = reader.place(latitude: 0.99, longitude: 1.5)
        #expect(south.regionCode == "AA-S")
        #expect(south.postalCode == "A-150")
    }

    @Test func aRegionWithoutCodesWithinTheCutOffTakesTheCountrysNearest() throws {
        // Only the northern centroid. At (0.99, 1.7), in AA-S, the region's one code (A-200 at
        // 0.3, 0.3) is 173 km away, past AA's 150 km cut-off: the country's nearest, 23 km
        // across the border, is better than none.
        let reader = try GeoIndexReader(path: try Fixture.build(extraPostalCodes: [Self.border[1]]).index)
        let south = reader.place(latitude: 0.99, longitude: 1.7)
        #expect(south.regionCode == "AA-S")
        #expect(south.postalCode == "A-160")
    }
}
