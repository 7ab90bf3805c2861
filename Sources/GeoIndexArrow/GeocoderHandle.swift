import GeoAttrModel
import GeoIndex

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
        for index in 0..<count {
            let place = reader.place(latitude: latitudes[index], longitude: longitudes[index])
            for (column, attribute) in PlaceAttribute.allCases.enumerated() {
                guard columns[column].append(attribute.value(in: place)) else { return nil }
            }
        }
        return columns
    }
}
