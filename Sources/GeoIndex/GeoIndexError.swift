/// Why an index file could not be opened. Every case names the file and what to do about it.
public enum GeoIndexError: Error, Equatable, Sendable, CustomStringConvertible {
    case cannotOpen(path: String, errno: Int32)
    case notRegularFile(path: String, kind: String)
    case notAnIndex(path: String)
    case unsupportedVersion(path: String, found: UInt32, supported: UInt32)
    case truncated(path: String, expectedSize: UInt64, actualSize: UInt64)
    case checksumMismatch(path: String, part: String)
    case corrupt(path: String, detail: String)
    /// The file shrank under the mapping, or was written, after it was opened: what was read from
    /// it is void.
    case changedUnderMapping(path: String)
    /// The mapping could not be guarded against the file shrinking (every guard slot taken).
    case cannotGuard(path: String, errno: Int32)

    public var description: String {
        switch self {
        case .cannotOpen(let path, let code):
            return "cannot open geo index \(path): \(String(cString: strerror(code))) (errno \(code))"
        case .notRegularFile(let path, let kind):
            return "geo index \(path) refused: \(kind); point index.path at the index file itself"
        case .notAnIndex(let path):
            return "\(path) is not a geoattrd geo index (bad magic); build one with `geoindex build --out FILE`"
        case .unsupportedVersion(let path, let found, let supported):
            return "geo index \(path) has format version \(found), this build reads format \(supported) only; install geoattrd-geodata of the same release, or rebuild the index with this release's `geoattrctl index build`"
        case .truncated(let path, let expected, let actual):
            return "geo index \(path) is truncated: header says \(expected) bytes, file has \(actual); rebuild or re-copy it"
        case .checksumMismatch(let path, let part):
            return "geo index \(path) is corrupt: \(part) checksum mismatch; rebuild or re-copy it"
        case .corrupt(let path, let detail):
            return "geo index \(path) is corrupt: \(detail); rebuild or re-copy it"
        case .changedUnderMapping(let path):
            return "geo index \(path) changed while it was open (copied over in place, or truncated); open it again once it is whole, and replace an index by rename (install -m 0644 NEW \(path)), never by copying over it"
        case .cannotGuard(let path, let code):
            return "cannot open geo index \(path): its mapping cannot be guarded against the file shrinking (\(String(cString: strerror(code))); at most \(CMAPPINGGUARD_CAPACITY) indexes are open in one process at once): close one first"
        }
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import CMappingGuard
