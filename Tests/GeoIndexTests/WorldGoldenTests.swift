#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import GeoIndex
import GeoPlaces
import Testing
import TestSupport

/// Golden cases against the real world index. It is not committed: build it with
/// scripts/fetch-geodata.sh && scripts/build-world-index.sh. Without it these tests are skipped.
@Suite(.enabled(if: WorldIndex.path != nil, "world index not found: run scripts/fetch-geodata.sh && scripts/build-world-index.sh, or set GEOINDEX_WORLD"))
struct WorldGoldenTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        var latitude: Double
        var longitude: Double
        var country: String?
        var region: String? = nil
        var locality: String? = nil
        var timeZone: String? = nil
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        // Enclaves and exclaves.
        Case(name: "Baarle-Hertog (BE enclave)", latitude: 51.4400, longitude: 4.9300, country: "BE", region: "BE-VLG", locality: "Baarle-Hertog"),
        Case(name: "Baarle-Nassau (NL, between the BE enclaves)", latitude: 51.4500, longitude: 4.9300, country: "NL", region: "NL-NB"),
        Case(name: "Buesingen am Hochrhein (DE exclave in CH)", latitude: 47.6970, longitude: 8.6900, country: "DE", region: "DE-BW", locality: "Büsingen", timeZone: "Europe/Busingen"),
        Case(name: "Schaffhausen next to Buesingen", latitude: 47.6960, longitude: 8.6350, country: "CH", region: "CH-SH"),
        Case(name: "Llivia (ES exclave in FR)", latitude: 42.4650, longitude: 1.9810, country: "ES", locality: "Llívia"),
        Case(name: "Campione d'Italia (IT exclave in CH)", latitude: 45.9690, longitude: 8.9710, country: "IT", region: "IT-25"),
        Case(name: "Point Roberts (US exclave)", latitude: 48.9860, longitude: -123.0600, country: "US", region: "US-WA", locality: "Point Roberts", timeZone: "America/Los_Angeles"),
        Case(name: "Tsawwassen across the line", latitude: 49.0100, longitude: -123.0800, country: "CA", region: "CA-BC"),
        Case(name: "Kaliningrad", latitude: 54.7100, longitude: 20.5100, country: "RU", region: "RU-KGD", locality: "Kaliningrad", timeZone: "Europe/Kaliningrad"),
        // Antimeridian.
        Case(name: "Fiji, Viti Levu (Suva)", latitude: -18.1400, longitude: 178.4400, country: "FJ", locality: "Suva"),
        Case(name: "Fiji, Taveuni east of 180", latitude: -16.8000, longitude: -179.9500, country: "FJ"),
        Case(name: "Chukotka west of 180", latitude: 65.0000, longitude: 179.5000, country: "RU", region: "RU-CHU"),
        Case(name: "Chukotka east of 180", latitude: 67.5000, longitude: -179.0000, country: "RU", region: "RU-CHU"),
        Case(name: "Aleutians, Adak", latitude: 51.8800, longitude: -176.6500, country: "US", region: "US-AK"),
        Case(name: "Aleutians, Attu (east longitude)", latitude: 52.9000, longitude: 173.0000, country: "US", region: "US-AK"),
        // Poles and open ocean.
        Case(name: "North Pole (sea)", latitude: 90, longitude: 0, country: nil),
        Case(name: "South Pole (Antarctica)", latitude: -90, longitude: 0, country: "AQ"),
        Case(name: "Mid-Atlantic", latitude: 30, longitude: -40, country: nil),
        Case(name: "North Sea, 50 km offshore", latitude: 53.0, longitude: 3.0, country: nil),
        // The territorial sea, harbours and the islands in them.
        Case(name: "5 km off the Dutch coast (Scheveningen)", latitude: 52.12, longitude: 4.18, country: "NL", timeZone: "Europe/Amsterdam"),
        Case(name: "Bay of Nice, 4 km out", latitude: 43.62, longitude: 7.30, country: "FR"),
        Case(name: "Friday Harbor seaplane base (San Juan Islands)", latitude: 48.5367, longitude: -123.0128, country: "US", region: "US-WA"),
        // A river border, 30 m either side (the Rhine between Strasbourg and Kehl).
        Case(name: "the Rhine, 30 m on the French side", latitude: 48.603049, longitude: 7.814416, country: "FR", timeZone: "Europe/Paris"),
        Case(name: "the Rhine, 30 m on the German side", latitude: 48.602758, longitude: 7.815102, country: "DE", timeZone: "Europe/Berlin"),
        // Border towns where LU, FR, BE, NL meet.
        Case(name: "Schengen (LU)", latitude: 49.4700, longitude: 6.3650, country: "LU"),
        Case(name: "Perl (DE) across the Moselle", latitude: 49.4730, longitude: 6.3900, country: "DE", region: "DE-SL"),
        Case(name: "Longwy (FR)", latitude: 49.5200, longitude: 5.7650, country: "FR", region: "FR-GES", locality: "Longwy"),
        Case(name: "Athus (BE)", latitude: 49.5650, longitude: 5.8300, country: "BE", region: "BE-WAL"),
        Case(name: "Rodange (LU)", latitude: 49.5450, longitude: 5.8400, country: "LU"),
        Case(name: "Vaals (NL)", latitude: 50.7730, longitude: 6.0200, country: "NL", region: "NL-LI", locality: "Vaals"),
        Case(name: "Aachen (DE)", latitude: 50.7760, longitude: 6.0840, country: "DE", region: "DE-NW", locality: "Aachen"),
        Case(name: "Luxembourg City", latitude: 49.6116, longitude: 6.1319, country: "LU", locality: "Luxembourg"),
        // Small islands that Natural Earth's land lacks: their country and region all the same.
        Case(name: "Maripipi island (PH)", latitude: 11.7790, longitude: 124.3408, country: "PH", region: "PH-BIL"),
        Case(name: "Tarama island (JP, Okinawa)", latitude: 24.6648, longitude: 124.7018, country: "JP", region: "JP-47"),
        Case(name: "Huaniao island (CN, Zhoushan)", latitude: 30.8513, longitude: 122.6931, country: "CN", region: "CN-ZJ"),
        // Big cities name the city, with the top-level ISO region.
        Case(name: "Paris", latitude: 48.8566, longitude: 2.3522, country: "FR", region: "FR-IDF", locality: "Paris", timeZone: "Europe/Paris"),
        Case(name: "Montpellier (FR-34 rolls up to FR-OCC)", latitude: 43.6108, longitude: 3.8767, country: "FR", region: "FR-OCC", locality: "Montpellier"),
        Case(name: "Canterbury (GB-KEN rolls up to GB-ENG)", latitude: 51.2802, longitude: 1.0789, country: "GB", region: "GB-ENG", locality: "Canterbury"),
        Case(name: "Rome (IT-RM rolls up to IT-62)", latitude: 41.9028, longitude: 12.4964, country: "IT", region: "IT-62", locality: "Rome"),
        Case(name: "Jakarta (province, not Java)", latitude: -6.2000, longitude: 106.8166, country: "ID", region: "ID-JK", locality: "Jakarta", timeZone: "Asia/Jakarta"),
        Case(name: "San Francisco", latitude: 37.7793, longitude: -122.4193, country: "US", region: "US-CA", locality: "San Francisco", timeZone: "America/Los_Angeles"),
    ]

    @Test(arguments: cases) func golden(_ golden: Case) throws {
        let reader = try GeoIndexReader(path: try #require(WorldIndex.path))
        let place = reader.place(latitude: golden.latitude, longitude: golden.longitude)
        #expect(place.countryCode == golden.country, "country")
        if let region = golden.region { #expect(place.regionCode == region, "region") }
        if let locality = golden.locality { #expect(place.localityName == locality, "locality") }
        if let timeZone = golden.timeZone { #expect(place.timeZone == timeZone, "time zone") }
        if golden.country != nil { #expect(place.timeZone != nil, "every country's point has a time zone") }
        if golden.country == nil { #expect(place == .empty) }
    }

    @Test func aTimeZoneIsShownWithTheCountryOnlyWhereItIsTheCountrysOnlyOne() throws {
        let reader = try GeoIndexReader(path: try #require(WorldIndex.path))
        #expect(reader.place(latitude: 48.8566, longitude: 2.3522).timeZoneCoversCountry == true, "Paris")
        #expect(reader.place(latitude: 52.52, longitude: 13.405).timeZoneCoversCountry == nil, "Berlin (Büsingen has a zone of its own)")
        #expect(reader.place(latitude: 37.7793, longitude: -122.4193).timeZoneCoversCountry == nil, "San Francisco")
    }

    @Test func nanAndOutOfRangeGiveEmptyPlaces() throws {
        let reader = try GeoIndexReader(path: try #require(WorldIndex.path))
        for (lat, lon) in [(Double.nan, 6.1), (49.6, .nan), (91, 6.1), (49.6, 181), (-.infinity, 0)] {
            #expect(reader.place(latitude: lat, longitude: lon) == .empty)
        }
    }
}

enum WorldIndex {
    /// `$GEOINDEX_WORLD`, else `world.gidx` where scripts/build-world-index.sh writes it:
    /// `$GEODATA_CACHE` (CI's cache outside the clone), else `cache/geodata` in the package.
    static let path: String? = {
        if let value = getenv("GEOINDEX_WORLD"), let text = String(validatingCString: value), access(text, R_OK) == 0 {
            return text
        }
        if let value = getenv("GEODATA_CACHE"), let directory = String(validatingCString: value) {
            let candidate = directory + "/world.gidx"
            if access(candidate, R_OK) == 0 { return candidate }
        }
        let candidate = RepositoryRoot.file("cache/geodata/world.gidx")
        return access(candidate, R_OK) == 0 ? candidate : nil
    }()
}
