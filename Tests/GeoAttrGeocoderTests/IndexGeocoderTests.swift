import Foundation
import GeoAttrCore
import GeoAttrGeocoder
import GeoIndex
import GeoPlaces
import Testing
import TestSupport

/// The daemon's geocoder answers from the index and lets go of the pages the lookup mapped.
@Suite struct IndexGeocoderTests {
    @Test func aLookupAnswersAndLeavesNoIndexPageResident() throws {
        let index = try Fixture.build().index
        let geocoder = try IndexGeocoder.load(path: index)
        // The same file read by a plain reader first: its pages are resident after a lookup, so
        // the measurement below can see them.
        let reader = try GeoIndexReader(path: index)
        #expect(reader.place(latitude: 1.5, longitude: 1.0).postalCode == "A-100")
        let resident = try Self.residentKilobytes(of: index)
        #expect(resident.contains { $0 > 0 }, "\(resident) \(index)")
        reader.releaseResidentPages()
        let place = geocoder.place(latitude: 1.5, longitude: 1.0)
        #expect(place.countryCode == "AA" && place.regionCode == "AA-N" && place.postalCode == "A-100")
        #expect(try Self.residentKilobytes(of: index) == [0, 0], "both mappings let go of their pages")
        // The next lookup maps what it needs again.
        #expect(geocoder.place(latitude: 0.3, longitude: 2.05).postalCode == "B-1")
    }

    /// Rss of each mapping of the file in this process, from /proc/self/smaps.
    static func residentKilobytes(of path: String) throws -> [Int] {
        // Read to the end: a /proc file has no size to read by.
        let smaps = String(decoding: try Fixture.readBytes("/proc/self/smaps"), as: UTF8.self)
        var sizes: [Int] = []
        var inMapping = false
        for line in smaps.split(separator: "\n") {
            if let first = line.first, first.isHexDigit, line.contains("-") {
                inMapping = line.hasSuffix(" " + path)
            } else if inMapping, line.hasPrefix("Rss:") {
                sizes.append(Int(line.split(separator: " ")[1]) ?? -1)
            }
        }
        return sizes
    }
}
