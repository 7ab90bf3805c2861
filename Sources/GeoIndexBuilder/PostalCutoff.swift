#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// How far a postal centroid may be from a point and still be its plausible postal code.
///
/// Density differs by two orders of magnitude between countries (DE centroids are ~2 km apart,
/// CA's three-character codes hundreds), so the cut-off is 2.5 times the 95th percentile of
/// the nearest-neighbour spacing of the country's own centroids, between 5 and 150 km.
enum PostalCutoff {
    static let minimum = 5_000.0
    static let maximum = 150_000.0

    /// The cut-off and the median centroid spacing (where a nearest search should start), in metres.
    static func meters(for points: [(latitude: Double, longitude: Double)]) -> (cutoff: Double, spacing: Double) {
        guard points.count >= 2 else { return (30_000, 5_000) }
        let cell = 0.5
        var grid: [Int: [(Double, Double)]] = [:]
        func key(_ row: Int, _ column: Int) -> Int { row * 1000 + column }
        for p in points {
            grid[key(Int(((p.latitude + 90) / cell).rounded(.down)), Int(((p.longitude + 180) / cell).rounded(.down))), default: []].append(p)
        }
        let step = max(1, points.count / 2000)
        var distances: [Double] = []
        var index = 0
        while index < points.count {
            let p = points[index]
            index += step
            let row = Int(((p.latitude + 90) / cell).rounded(.down))
            let column = Int(((p.longitude + 180) / cell).rounded(.down))
            var best = Double.infinity
            for ring in 0...4 {
                for r in (row - ring)...(row + ring) {
                    for c in (column - ring)...(column + ring) where max(abs(r - row), abs(c - column)) == ring {
                        for q in grid[key(r, c)] ?? [] {
                            let d = approximateMeters(p, q)
                            if d > 0, d < best { best = d }
                        }
                    }
                }
                if best < Double(ring) * cell * 55_000 { break }
            }
            if best.isFinite { distances.append(best) }
        }
        guard !distances.isEmpty else { return (maximum, 5_000) }
        distances.sort()
        let p95 = distances[min(distances.count - 1, Int(Double(distances.count) * 0.95))]
        return (min(max(2.5 * p95, minimum), maximum), distances[distances.count / 2])
    }

    static func approximateMeters(_ a: (Double, Double), _ b: (Double, Double)) -> Double {
        let meanLatitude = (a.0 + b.0) * 0.5 * Double.pi / 180
        let dy = (a.0 - b.0) * 110_574
        var dLon = a.1 - b.1
        if dLon > 180 { dLon -= 360 } else if dLon < -180 { dLon += 360 }
        let dx = dLon * 111_320 * cos(meanLatitude)
        return (dx * dx + dy * dy).squareRoot()
    }
}
