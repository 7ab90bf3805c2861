#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
@testable import GeoIndex
@testable import GeoIndexBuilder
import GeoPlaces
import TestSupport
import Testing

/// The postal distance floors only let a search skip or start wider: they must never exceed the
/// true distance to the nearest point, and no answer may change.
@Suite struct PostalFloorTests {
    @Test func floorsNeverExceedTheDistanceToTheNearestPoint() throws {
        var random = SplitMix64(seed: 0x666c_6f6f_7273)
        // Clusters where the geometry is awkward: the antimeridian, near a pole, the equator.
        let centres = [(0.2, 179.9), (-40.0, -179.8), (84.0, 20.0), (-88.5, 100.0), (0.0, 0.0), (51.5, -0.1)]
        var points: [(latitude: Double, longitude: Double)] = []
        for centre in centres {
            for _ in 0..<300 {
                let longitude = TestGeometry.wrapped(centre.1 + (random.unit() - 0.5) * 3)
                points.append((min(max(centre.0 + (random.unit() - 0.5) * 2, -90), 90), longitude))
            }
        }
        let section = DistanceFloorGridBuilder.section(points: points, cellSize: 0.5, unitMeters: 1_000)
        try section.withUnsafeBytes { raw in
            let base = try #require(raw.baseAddress)
            let grid = try #require(DistanceFloorGrid(section: ByteView(base: base, count: raw.count)))
            var farFloors = 0
            for index in 0..<20_000 {
                // Half near the clusters (up to 4 degrees out), half anywhere.
                let query: (Double, Double)
                if index % 2 == 0 {
                    let centre = centres[index / 2 % centres.count]
                    let longitude = TestGeometry.wrapped(centre.1 + (random.unit() - 0.5) * 8)
                    query = (min(max(centre.0 + (random.unit() - 0.5) * 8, -89.999), 89.999), longitude)
                } else {
                    query = (asin(2 * random.unit() - 1) * 180 / Double.pi, random.unit() * 360 - 180)
                }
                let nearest = points.map { TestGeometry.distance(from: query, to: $0) }.min() ?? .infinity
                let floor = grid.floorMeters(latitude: query.0, longitude: query.1)
                #expect(floor <= nearest, "floor \(floor) m above the nearest point at \(nearest) m from \(query)")
                if floor >= 100_000 { farFloors += 1 }
            }
            // Most of the globe is far from every cluster: the floors must say so to be of use.
            #expect(farFloors > 5_000)
        }
    }

    @Test func floorsChangeNoAnswer() throws {
        let with = try GeoIndexReader(path: try Fixture.build().index)
        let without = try GeoIndexReader(path: try Fixture.build(postalFloors: false).index)
        var codes: Set<String> = []
        // The fixture's AA and BB with the sea around them, every 2.2 km.
        for row in 0...150 {
            for column in 0...250 {
                let latitude = -0.5 + Double(row) * 0.02
                let longitude = -0.5 + Double(column) * 0.02
                let a = with.place(latitude: latitude, longitude: longitude)
                let b = without.place(latitude: latitude, longitude: longitude)
                guard a == b else {
                    Issue.record("(\(latitude), \(longitude)): \(a) with floors, \(b) without")
                    return
                }
                codes.insert(a.postalCode ?? (a.countryCode == nil ? "sea" : "none"))
            }
        }
        // Every answer kind is covered: codes of both countries, land too far from any, the sea.
        #expect(codes.isSuperset(of: ["A-100", "A-101", "A-200", "B-1", "none", "sea"]))
    }
}
