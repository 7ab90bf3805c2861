#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import GeoIndex

/// The region of each postal centroid, found in the built region layer the way the reader finds
/// a point's: the region containing it when that region's code belongs to the centroid's
/// country, else the nearest region of that country in the cell. The reader then prefers
/// centroids of the point's own region, so a code never comes from across a state line when the
/// point's state has one within the cut-off.
enum PostalRegions {
    struct Centroid {
        var latitude: Double
        var longitude: Double
        var country: UInt16
    }

    /// A region code index per centroid (`IndexFormat.noIndex` where none is known).
    static func resolve(
        _ centroids: [Centroid], regionLayerSection: [UInt8], neRegions: [(country: UInt16, region: UInt16)],
        regionCodes: [(country: UInt16, code: String)]
    ) -> [UInt16] {
        func codeIndex(_ area: UInt32, country: UInt16) -> UInt16? {
            guard Int(area) < neRegions.count else { return nil }
            let region = neRegions[Int(area)].region
            guard region != IndexFormat.noIndex, Int(region) < regionCodes.count, regionCodes[Int(region)].country == country else {
                return nil
            }
            return region
        }
        return regionLayerSection.withUnsafeBytes { raw -> [UInt16] in
            guard let base = raw.baseAddress, let layer = AreaLayer(section: ByteView(base: base, count: raw.count)) else {
                return [UInt16](repeating: IndexFormat.noIndex, count: centroids.count)
            }
            return centroids.map { centroid in
                let (latitude, longitude) = GeoIndexReader.inset(latitude: centroid.latitude, longitude: centroid.longitude)
                let metersX = CellGeometry.metersPerDegreeLongitudeAtEquator * cos(latitude * Double.pi / 180)
                guard
                    let probe = layer.probe(
                        latitude: latitude, longitude: longitude, metersPerDegreeLongitude: metersX,
                        accept: { codeIndex($0, country: centroid.country) != nil })
                else { return IndexFormat.noIndex }
                return (probe.area.flatMap { codeIndex($0, country: centroid.country) }
                    ?? probe.nearestAccepted.flatMap { codeIndex($0, country: centroid.country) }) ?? IndexFormat.noIndex
            }
        }
    }
}
