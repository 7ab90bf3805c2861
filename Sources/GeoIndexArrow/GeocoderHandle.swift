import GeoAttrModel
import GeoIndex
import GeoPlaces

/// What a C caller holds between `geoattrd_geocoder_open` and `geoattrd_geocoder_close`: the
/// memory-mapped index, which every process on a machine that opens the same file shares.
final class GeocoderHandle: Sendable {
    let reader: GeoIndexReader

    init(reader: GeoIndexReader) {
        self.reader = reader
    }

    /// The columns of a batch, in `PlaceAttribute`'s order, each named as its attribute with
    /// underscores for dots (`geo_country_iso_code`): names a SQL or Spark user types as they are.
    static let columnNames: [String] = PlaceAttribute.allCases.map { attribute in
        String(attribute.name.map { $0 == "." ? "_" : $0 })
    }

    /// Looks up every point; a point with a coordinate that is not a number, infinite or out of
    /// range gets nulls, as a point the index has no answer for does. Nil when a column's data
    /// would pass 2 GiB.
    func lookup(latitudes: UnsafeBufferPointer<Double>, longitudes: UnsafeBufferPointer<Double>) -> [ArrowStringColumn]? {
        let count = min(latitudes.count, longitudes.count)
        var columns = PlaceAttribute.allCases.map { _ in ArrowStringColumn(capacity: count) }
        var places = [GeoPlace](repeating: .empty, count: min(count, SpatialOrder.blockSize))
        // The places of one block are kept until their columns are written, in input order.
        // In spatial order, as geoattrctl lookup --batch does: the index pages one lookup reads
        // are in cache for the next.
        for (range, order) in SpatialOrder.blocks(count: count, point: { (latitudes[$0], longitudes[$0]) }) {
            for index in order {
                let point = range.lowerBound + Int(index)
                places[Int(index)] = reader.place(latitude: latitudes[point], longitude: longitudes[point])
            }
            for place in places[0..<range.count] {
                for (column, attribute) in PlaceAttribute.allCases.enumerated() {
                    guard columns[column].append(attribute.value(in: place)) else { return nil }
                }
            }
        }
        return columns
    }
}
