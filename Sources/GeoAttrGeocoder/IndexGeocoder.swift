public import GeoAttrCore
public import GeoIndex

/// The offline index as the daemon's geocoder.
///
/// Opening validates the header and section table (every later read is bounds-checked); the
/// whole-file checksum is left to `geoattrctl index info`, because reading all of a 28 MB index
/// at every start or swap would make it resident on a 256 MB device for nothing.
public struct IndexGeocoder: Geocoding {
    let reader: GeoIndexReader
    public let indexVersion: String

    public static func load(path: String) throws -> any Geocoding {
        let reader = try GeoIndexReader(path: path)
        let info = reader.info
        let name = path.split(separator: "/").last.map(String.init) ?? path
        // The size tells apart two builds of one day, so stationary reuse never hides a new index.
        return IndexGeocoder(
            reader: reader, indexVersion: "\(name) format \(info.formatVersion) built \(info.buildDate) size \(info.fileSize)")
    }

    public func place(latitude: Double, longitude: Double) -> GeoPlace {
        reader.place(latitude: latitude, longitude: longitude)
    }
}
