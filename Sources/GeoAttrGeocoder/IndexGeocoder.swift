public import GeoAttrCore
import GeoIndex
public import GeoPlaces

/// The offline index as the daemon's geocoder.
///
/// Opening validates the header and section table (every later read is bounds-checked); the
/// whole-file checksum is left to `geoattrctl index info`, because reading all of a 20 MB index
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

    /// The daemon looks up once per accepted fix, an hour apart by default: the pages a lookup
    /// touched (with the kernel's fault-around, about 1.7 MB of the world index) are let go
    /// after it rather than held as the daemon's memory until the next one.
    public func place(latitude: Double, longitude: Double) -> GeoPlace {
        let place = reader.place(latitude: latitude, longitude: longitude)
        reader.releaseResidentPages()
        return place
    }

    /// False once the file has shrunk under the mapping (a copy in place, a truncate): the reads
    /// past its end gave zeros, not a crash, and the answer is void.
    public var isIntact: Bool { reader.isIntact }
}
