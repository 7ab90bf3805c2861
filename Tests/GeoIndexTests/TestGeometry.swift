#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Test oracles for the point grids, written out independently of the reader.
enum TestGeometry {
    /// Distance in metres as `PointGrid.forEach` measures it: x scaled by the cosine of the
    /// query's latitude (at least 1% of the equator's), longitude differences wrapped.
    static func distance(from query: (Double, Double), to point: (latitude: Double, longitude: Double)) -> Double {
        let metersX = max(111_320 * cos(query.0 * Double.pi / 180), 1_113.2)
        var deltaLon = point.longitude - query.1
        if deltaLon > 180 { deltaLon -= 360 } else if deltaLon < -180 { deltaLon += 360 }
        let dx = deltaLon * metersX
        let dy = (point.latitude - query.0) * 110_574
        return (dx * dx + dy * dy).squareRoot()
    }

    /// A longitude folded back into [-180, 180).
    static func wrapped(_ longitude: Double) -> Double {
        longitude >= 180 ? longitude - 360 : longitude < -180 ? longitude + 360 : longitude
    }
}
