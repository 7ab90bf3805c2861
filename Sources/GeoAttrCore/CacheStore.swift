public import GeoAttrModel

/// Why the cache file could not be read or written.
public enum CacheFileError: Error, Sendable, Hashable, CustomStringConvertible {
    case unreadable(path: String, reason: String)
    case corrupt(path: String, reason: String)
    case unwritable(path: String, reason: String)

    public var description: String {
        switch self {
        case .unreadable(let path, let reason): "cannot read the cache file \(path): \(reason)"
        case .corrupt(let path, let reason): "the cache file \(path) is corrupt: \(reason)"
        case .unwritable(let path, let reason): "cannot write the cache file \(path): \(reason)"
        }
    }
}

/// Persistence of the last good result, so attributes are there from the first millisecond
/// after a reboot.
public protocol CacheStore: Sendable {
    /// The stored result, `nil` when there is none. A corrupt file throws `.corrupt` after it
    /// has been set aside, so the next write starts clean.
    func load() throws(CacheFileError) -> LocationResult?
    func save(_ result: LocationResult) throws(CacheFileError)
}
