#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Distances on the Earth, for stationary reuse.
public enum GreatCircle {
    static let earthRadiusMeters = 6_371_008.8

    /// Haversine distance in metres.
    public static func distanceMeters(latitude1: Double, longitude1: Double, latitude2: Double, longitude2: Double) -> Double {
        let radians = Double.pi / 180
        let dLat = (latitude2 - latitude1) * radians
        let dLon = (longitude2 - longitude1) * radians
        let a = sinHalfSquared(dLat) + cos(latitude1 * radians) * cos(latitude2 * radians) * sinHalfSquared(dLon)
        return 2 * earthRadiusMeters * asin(min(1, a.squareRoot()))
    }

    private static func sinHalfSquared(_ x: Double) -> Double {
        let s = sin(x / 2)
        return s * s
    }
}
