import TestSupport
import GeoIndex
import GeoPlaces
import Testing

/// The time zone of a point: the name of the time-zone area the country comes from, and whether
/// it is the country's only one.
@Suite struct TimeZoneLookupTests {
    let reader: GeoIndexReader

    init() throws {
        // FF has two zones, side by side.
        let ff = [
            Fixture.feature(#""country":"FF","iso_a2":"FF","zone":"Test/FF-West""#, polygons: [[Fixture.square(40, 40, 41, 41)]]),
            Fixture.feature(#""country":"FF","iso_a2":"FF","zone":"Test/FF-East""#, polygons: [[Fixture.square(41, 40, 42, 41)]]),
        ]
        reader = try GeoIndexReader(path: try Fixture.build(postal: false, extraCountries: ff).index)
    }

    @Test func aCountrysOnlyZoneCoversIt() {
        let place = reader.place(latitude: 1.5, longitude: 1.0)
        #expect(place.countryCode == "AA")
        #expect(place.timeZone == "Test/AA")
        #expect(place.timeZoneCoversCountry == true)
        // The enclave is BB's, and so is its zone.
        #expect(reader.place(latitude: 0.6, longitude: 0.6).timeZone == "Test/BB")
    }

    @Test func oneOfSeveralZonesNamesAPartOfTheCountry() {
        let west = reader.place(latitude: 40.5, longitude: 40.5)
        let east = reader.place(latitude: 40.5, longitude: 41.5)
        #expect(west.countryCode == "FF")
        #expect(east.countryCode == "FF")
        #expect(west.timeZone == "Test/FF-West")
        #expect(east.timeZone == "Test/FF-East")
        #expect(west.timeZoneCoversCountry == nil)
        #expect(east.timeZoneCoversCountry == nil)
        #expect(!west.sameArea(as: east), "a zone's edge is an area's edge, for hysteresis")
    }

    @Test func aZoneSpanningTwoCountriesIsEachOnesZone() {
        for (longitude, country) in [(10.5, "DD"), (11.5, "EE")] {
            let place = reader.place(latitude: 11, longitude: longitude)
            #expect(place.countryCode == country)
            #expect(place.timeZone == "Test/DDEE")
            #expect(place.timeZoneCoversCountry == true)
        }
    }

    @Test func noCountryNoZone() {
        #expect(reader.place(latitude: 30, longitude: -40).timeZone == nil)
        #expect(reader.place(latitude: 20.5, longitude: 20.5).timeZone == nil, "an Etc zone names no country")
    }

    @Test func theNamesAreCounted() {
        #expect(reader.info.counts.contains { $0.name == "time zones" && $0.value == "6" })
    }
}
