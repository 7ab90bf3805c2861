import GeoIndex
import GeoIndexBuilder
import GeoPlaces
import TestSupport
import Testing

/// The builder leaves out places that a bigger place always outranks; no answer may change.
@Suite struct DominatedPlacesTests {
    @Test func aSuburbThatCanNeverWinIsLeftOutAndNoLocalityChanges() throws {
        // Beside Bigcity (2 million people at 1.5, 1.0), 1 km = 0.009 degrees:
        // - Suburbia (20,000, 7.8 km away, in the fixture): sqrt(100) = 10 > 1 + 7.8: left out;
        // - Farmington (5,000, 15 km east): sqrt(400) = 20 > 1 + 15: left out;
        // - Edgetown (20,000, 15 km north): sqrt(100) = 10 < 1 + 15: kept, and its core names it;
        // - Outpost (800, 30 km south): Bigcity does not reach 10 km beyond it: kept (the
        //   nearest-place fallback may name it).
        let extra = [
            Fixture.place(20, "Farmington", 1.5, 1.0 + 15 / 111.3, "AA", 5_000),
            Fixture.place(21, "Edgetown", 1.5 + 15 / 111.3, 1.0, "AA", 20_000),
            Fixture.place(22, "Outpost", 1.5 - 30 / 111.3, 1.0, "AA", 800),
        ]
        let pruned = try Fixture.build(postal: false, extraCities: extra)
        let full = try Fixture.build(postal: false, keepDominatedPlaces: true, extraCities: extra)
        #expect(pruned.report.lines.contains { $0.contains("; 2 that a bigger place always outranks left out") })
        #expect(full.report.lines.contains { $0.contains("; 0 that a bigger place always outranks left out") })
        let prunedReader = try GeoIndexReader(path: pruned.index)
        let fullReader = try GeoIndexReader(path: full.index)

        // Every point of the metropolitan area and the 10 km fallback ring around it, every 280 m.
        var compared = 0
        var named: Set<String> = []
        for row in 0...360 {
            for column in 0...360 {
                let latitude = 1.05 + Double(row) * 0.0025
                let longitude = 0.6 + Double(column) * 0.0025
                let before = fullReader.place(latitude: latitude, longitude: longitude)
                let after = prunedReader.place(latitude: latitude, longitude: longitude)
                guard before.localityName == after.localityName else {
                    Issue.record("(\(latitude), \(longitude)): \(before.localityName ?? "none") before, \(after.localityName ?? "none") after")
                    return
                }
                named.insert(before.localityName ?? "none")
                compared += 1
            }
        }
        #expect(compared == 361 * 361)
        // The grid reaches all of the area's answers, so the comparison covers each of them.
        #expect(named.isSuperset(of: ["Bigcity", "Edgetown", "Outpost", "none"]))
        #expect(named.isDisjoint(with: ["Suburbia", "Farmington"]), "they never win, even in the index that keeps them")
    }
}
