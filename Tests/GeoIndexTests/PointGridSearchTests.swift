#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
@testable import GeoIndex
@testable import GeoIndexBuilder
import Testing
import TestSupport

/// `PointGrid.forEach` against a brute-force search, with and without the chunk directory,
/// over cells both small (scanned front to back) and large (binary-searched by latitude).
@Suite struct PointGridSearchTests {
    @Test func searchFindsExactlyThePointsWithinTheRadius() throws {
        var random = SplitMix64(seed: 0x6772_6964)
        var grid = PointGridBuilder(cellSize: 0.1)
        // Sparse points along a band across the antimeridian, a county (cells of about 30,
        // scanned front to back) and a dense town (cells of hundreds, binary-searched).
        var count: UInt32 = 0
        func add(_ latitude: Double, _ longitude: Double) {
            var payload = ByteWriter()
            payload.u32(count)
            grid.add(latitude: latitude, longitude: longitude, payload: payload.data)
            count += 1
        }
        for _ in 0..<3_000 { add(-5 + random.unit() * 10, TestGeometry.wrapped(170 + random.unit() * 30)) }
        for _ in 0..<3_000 { add(40 + random.unit(), -3 + random.unit()) }
        for _ in 0..<3_000 { add(48.1 + random.unit() * 0.25, 11.4 + random.unit() * 0.35) }
        let positions = grid.decodedPositions
        let section = grid.section(recordSize: 6)
        var withoutDirectory = section
        withoutDirectory.replaceSubrange(28..<32, with: [0, 0, 0, 0])

        let queries: [(Double, Double, Double)] = (0..<1_500).map { index in
            let radius = 200 + random.unit() * 40_000
            switch index % 3 {
            case 0: return (-6 + random.unit() * 12, TestGeometry.wrapped(168 + random.unit() * 34), radius)
            case 1: return (39.8 + random.unit() * 1.4, -3.2 + random.unit() * 1.4, radius / 4)
            default: return (48.0 + random.unit() * 0.45, 11.3 + random.unit() * 0.55, radius / 10)
            }
        }
        var found = 0
        for bytes in [section, withoutDirectory] {
            try bytes.withUnsafeBytes { raw in
                let base = try #require(raw.baseAddress)
                let pointGrid = try #require(PointGrid(section: ByteView(base: base, count: raw.count), expectedRecordSize: 6))
                for (latitude, longitude, radius) in queries {
                    let metersX = 111_320 * cos(latitude * Double.pi / 180)
                    var seen: Set<Int> = []
                    pointGrid.forEach(near: latitude, longitude, radius: radius, metersPerDegreeLongitude: metersX) { offset, _ in
                        if let index = pointGrid.records.u32(offset + 2) { seen.insert(Int(index)) }
                    }
                    found += seen.count
                    for (index, point) in positions.enumerated() {
                        let distance = TestGeometry.distance(from: (latitude, longitude), to: point)
                        // Within a metre of the radius either answer is right (rounding).
                        if distance < radius - 1 && !seen.contains(index) {
                            Issue.record("missed point \(index) at \(distance) m of \(radius) from (\(latitude), \(longitude))")
                            return
                        }
                        if distance > radius + 1 && seen.contains(index) {
                            Issue.record("reported point \(index) at \(distance) m beyond \(radius) from (\(latitude), \(longitude))")
                            return
                        }
                    }
                }
            }
        }
        // The queries do reach points (tens of thousands of hits, from both kinds of cell).
        #expect(found > 20_000)
    }
}
