import TestSupport
import GeoIndex
import GeoIndexBuilder
import GeoPlaces
import Testing

/// Lookup semantics on synthetic sources built by the test (always runs, no downloaded data).
@Suite struct FixtureLookupTests {
    let reader: GeoIndexReader
    let report: BuildReport

    init() throws {
        let built = try Fixture.build()
        reader = try GeoIndexReader(path: built.index)
        report = built.report
    }

    @Test func countryComesFromThePolygonNotTheNearestPlace() {
        // 7.8 km from Borderton (BB) but inside AA, whose nearest own place is far away.
        let place = reader.place(latitude: 0.3, longitude: 1.98)
        #expect(place.countryCode == "AA")
        #expect(place.localityName == nil, "a locality must never come from across the border")
        #expect(place.continentCode == "EU")
    }

    @Test func enclaveInsideAHoleBelongsToTheOtherCountry() {
        #expect(reader.place(latitude: 0.6, longitude: 0.6).countryCode == "BB")
        #expect(reader.place(latitude: 0.6, longitude: 0.6).regionCode == "BB-X")
        #expect(reader.place(latitude: 0.6, longitude: 0.6).localityName == "Enclavia")
        #expect(reader.place(latitude: 0.6, longitude: 0.45).countryCode == "AA")
    }

    @Test func regionRollsUpAndNeverContradictsTheCountry() {
        #expect(reader.place(latitude: 1.5, longitude: 0.5).regionCode == "AA-N")
        // Given as the second-level AA-S1, rolled up to its parent AA-S.
        #expect(reader.place(latitude: 0.3, longitude: 0.3).regionCode == "AA-S")
        // BB-X's coarse polygon spills 0.1 degree into AA: the point is AA, so the region is AA's.
        let spill = reader.place(latitude: 0.3, longitude: 1.95)
        #expect(spill.countryCode == "AA")
        #expect(spill.regionCode == "AA-S")
    }

    @Test func invalidCodesAreRejectedAtBuildTime() {
        #expect(report.lines.contains { $0.contains("1 codes failed iso-codes validation") })
    }

    @Test func bigCityWinsOverItsSuburbAndNeighbourhoods() {
        #expect(reader.place(latitude: 1.55, longitude: 1.05).localityName == "Bigcity")
        // PPLX (a section of a city) is not a locality.
        #expect(reader.place(latitude: 1.45, longitude: 1.0).localityName == "Bigcity")
        #expect(reader.place(latitude: 0.3, longitude: 0.31).localityName == "Smallville")
    }

    @Test func theTerritorialSeaIsTheCountrysAndOpenSeaNobodys() {
        // AA's polygon runs on to lat 2.5 over the sea, as a territorial sea does; land stops at 2.
        for latitude in [2.004, 2.3, 2.49] {
            let place = reader.place(latitude: latitude, longitude: 1.0)
            #expect(place.countryCode == "AA", "\(latitude)")
            #expect(place.timeZone == "Test/AA", "\(latitude)")
            #expect(place.regionCode.map { $0.hasPrefix("AA-") } != false, "a region at sea is one of the country's")
        }
        #expect(reader.place(latitude: 2.51, longitude: 1.0) == .empty, "just past the polygon's edge")
        #expect(reader.place(latitude: 2.8, longitude: 1.0) == .empty)
        #expect(reader.place(latitude: 30, longitude: -40) == .empty)
    }

    @Test func zoneSpanningTwoCountriesIsSplitByAdmin1() {
        let west = reader.place(latitude: 11, longitude: 10.5)
        #expect(west.countryCode == "DD")
        #expect(west.regionCode == "DD-1")
        #expect(west.localityName == "Deeville")
        let east = reader.place(latitude: 11, longitude: 11.5)
        #expect(east.countryCode == "EE")
        #expect(east.regionCode == "EE-1")
        #expect(east.localityName == "Eeeville")
        #expect(east.continentCode == "AS")
    }

    @Test func antimeridianBothSidesAndLongitude180() {
        for longitude in [179.5, 179.95, -179.95, -179.5, 180.0, -180.0] {
            let place = reader.place(latitude: -16.5, longitude: longitude)
            #expect(place.countryCode == "CC", "longitude \(longitude)")
            #expect(place.regionCode == "CC-E", "longitude \(longitude)")
        }
        #expect(reader.place(latitude: -16.5, longitude: -179.5).localityName == "Eastport")
    }

    @Test func invalidInputGivesAnEmptyPlace() {
        for (lat, lon) in [(Double.nan, 0.0), (0, .nan), (.infinity, 0), (0, -.infinity), (90.5, 0), (-91, 0), (0, 180.01), (0, -200)] {
            #expect(reader.place(latitude: lat, longitude: lon) == .empty)
        }
        #expect(reader.place(latitude: 90, longitude: 0) == .empty)
        #expect(reader.place(latitude: -90, longitude: 0) == .empty)
    }

    @Test func postalCodeIsNearestSameCountryAndSkipsOrganisations() {
        #expect(reader.place(latitude: 1.5, longitude: 1.001).postalCode == "A-100")
        #expect(reader.place(latitude: 1.52, longitude: 1.02).postalCode != "A-999")
        // Across the border the nearest centroid is B-1, but the point is in AA.
        #expect(reader.place(latitude: 0.3, longitude: 1.99).postalCode != "B-1")
        #expect(report.lines.contains { $0.contains("1 organisation-only codes dropped") })
    }

    @Test func postalCodesCanBeLeftOut() throws {
        let built = try Fixture.build(postal: false)
        let small = try GeoIndexReader(path: built.index)
        let place = small.place(latitude: 1.5, longitude: 1.001)
        #expect(place.postalCode == nil)
        #expect(place.countryCode == "AA")
    }

    @Test func boundaryMarginIsTheDistanceToTheEdge() throws {
        // 0.01 degree of latitude from the AA-N / AA-S line at lat 1: about 1.1 km.
        let margin = try #require(reader.place(latitude: 1.01, longitude: 0.3).boundaryMarginMeters)
        #expect(abs(margin - 1_105) < 30, "margin \(margin)")
        // Far inside, the margin is at least a lower bound and never negative.
        let inner = try #require(reader.place(latitude: 1.5, longitude: 1.2).boundaryMarginMeters)
        #expect(inner > 1_000)
    }

    @Test func infoCarriesVersionSourcesCountsAndAttribution() throws {
        let info = reader.info
        #expect(info.formatVersion == IndexFormat.version)
        #expect(info.buildDate == "2026-01-01T00:00:00Z")
        #expect(info.sources.first?.name == "Fixture polygons")
        #expect(info.attribution.contains("GeoNames"))
        #expect(info.attribution.contains("CC BY 4.0"))
        #expect(info.attribution.contains("OpenStreetMap"))
        #expect(info.counts.contains { $0.name == "places" })
        try reader.verifyContents()
    }
}

@Suite struct RegionRollUpTests {
    @Test func rollsUpToTheLevelAResidentNames() throws {
        let built = try Fixture.build(postal: false)
        let iso = try ISOSubdivisions(path: built.directory + "/iso_3166-2.json")
        #expect(iso.residentLevel(of: "FR-34") == "FR-OCC")
        #expect(iso.residentLevel(of: "GB-KEN") == "GB-ENG")
        #expect(iso.residentLevel(of: "IT-RM") == "IT-62")
        #expect(iso.residentLevel(of: "ID-JK") == "ID-JK", "Indonesia keeps the province")
        #expect(iso.residentLevel(of: "FR-99") == nil, "unknown codes are rejected")
    }
}
