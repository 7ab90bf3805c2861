#if canImport(Glibc)
import Glibc
#endif

/// A seeded generator, so a failing number can be reproduced.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }
}

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
