#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension GeoIndexReader {
    /// Whether the point is on land, or within `coastToleranceMeters` of it: only there does a
    /// point get a country.
    func isLandOrCoast(latitude: Double, longitude: Double) -> Bool {
        // Natural Earth is clipped at -89.9 latitude and +-179.9 longitude; clamping keeps the
        // land that reaches those lines (Antarctica, Fiji, Chukotka) on land.
        let clampedLatitude = max(latitude, -89.89)
        let clampedLongitude = min(max(longitude, -179.89), 179.89)
        let metersX = CellGeometry.metersPerDegreeLongitudeAtEquator * cos(clampedLatitude * Double.pi / 180)
        guard
            let probe = land.probe(
                latitude: clampedLatitude, longitude: clampedLongitude, metersPerDegreeLongitude: metersX,
                distanceLimit: coastToleranceMeters)
        else { return false }
        return probe.area != nil || probe.edgeDistance <= coastToleranceMeters
    }
}
