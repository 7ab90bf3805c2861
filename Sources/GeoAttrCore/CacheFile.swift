import FoundationEssentials
public import GeoAttrModel

#if canImport(Glibc)
import Glibc
#endif

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

/// The last good result as JSON in the state directory, with a schema version, written
/// atomically: temporary file, fsync, rename over the old one, fsync of the directory. A power
/// cut leaves either the old or the new complete file.
public struct CacheFile: CacheStore {
    public static let schemaVersion = 1
    public static let fileName = "cache.json"
    /// A cache larger than this is not ours.
    static let maximumSize = 64 * 1024
    /// 2024-01-01: a clock before this has not been set.
    static let earliestSaneClockSeconds: Int64 = 1_704_067_200
    /// 2100-01-01 in milliseconds: the bound when the clock cannot judge.
    static let latestPlausibleGeneration: UInt64 = 4_102_444_800_000

    public let directory: String
    public var path: String { "\(directory)/\(Self.fileName)" }
    /// Where a corrupt file is moved (replacing an older one), for an operator to inspect.
    public var setAsidePath: String { "\(path).corrupt" }

    public init(directory: String) {
        self.directory = directory
    }

    struct Envelope: Codable {
        var schema: Int
        var result: LocationResult
    }

    public func load() throws(CacheFileError) -> LocationResult? {
        let bytes: [UInt8]
        do throws(FileBytes.ReadError) {
            guard let read = try FileBytes.read(path, limit: Self.maximumSize) else { return nil }
            bytes = read
        } catch {
            switch error {
            case .tooLarge: throw setAside(reason: "larger than \(Self.maximumSize) bytes")
            case .notRegular, .system: throw .unreadable(path: path, reason: error.description)
            }
        }
        let envelope: Envelope
        do {
            envelope = try JSONDecoder().decode(Envelope.self, from: Data(bytes))
        } catch {
            throw setAside(reason: "not a geoattrd cache (\(Self.summary(of: error)))")
        }
        guard envelope.schema == Self.schemaVersion else {
            throw setAside(reason: "schema \(envelope.schema), this geoattrd reads schema \(Self.schemaVersion)")
        }
        let fix = envelope.result.fix
        guard PositionValidity.isPlausible(latitude: fix.latitude, longitude: fix.longitude) else {
            throw setAside(reason: "position \(fix.latitude), \(fix.longitude) is not on Earth")
        }
        // Generations are wall-clock milliseconds at least, and each result's is one more than the
        // last: one far in the future would pin every later generation (and ETag) to it. A device
        // without a real-time clock boots with a clock far behind (systemd's build date, 1970):
        // then only an absolute bound is applied, so its cache is not thrown away at every boot.
        let now = UTCTimestamp.now()
        let clockIsSane = now.seconds >= Self.earliestSaneClockSeconds
        let latestPlausible = clockIsSane ? now.generationMilliseconds(plusSeconds: 86_400) : Self.latestPlausibleGeneration
        guard envelope.result.generation <= latestPlausible else {
            throw setAside(
                reason: "generation \(envelope.result.generation) is beyond " + (clockIsSane ? "the clock plus a day" : "the year 2100"))
        }
        return envelope.result
    }

    public func save(_ result: LocationResult) throws(CacheFileError) {
        let data: Data
        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            data = try encoder.encode(Envelope(schema: Self.schemaVersion, result: result))
        } catch {
            throw .unwritable(path: path, reason: "encoding failed: \(error)")
        }
        do {
            try FileBytes.writeAtomically(Array(data), to: path)
        } catch {
            throw .unwritable(path: path, reason: error.reason)
        }
    }

    /// Removes the temporary files of writes a crash interrupted (`cache.json.tmp-PID...` of PIDs
    /// that no longer run), which would otherwise pile up, one per crash. Call at start, before
    /// the first write. Returns the paths removed.
    public func removeStaleTemporaryFiles() -> [String] {
        FileBytes.removeStaleTemporaries(of: path)
    }

    private func setAside(reason: String) -> CacheFileError {
        if rename(path, setAsidePath) != 0 {
            return .corrupt(path: path, reason: "\(reason); setting it aside failed: \(FileBytes.errorText())")
        }
        return .corrupt(path: path, reason: "\(reason); moved to \(setAsidePath)")
    }

    private static func summary(of error: any Error) -> String {
        switch error {
        case DecodingError.dataCorrupted(let context): "invalid JSON: \(context.debugDescription)"
        case DecodingError.keyNotFound(let key, _): "missing \(key.stringValue)"
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context):
            "bad value at \(context.codingPath.map(\.stringValue).joined(separator: "."))"
        default: "\(error)"
        }
    }
}

extension UTCTimestamp {
    /// Milliseconds since the epoch (plus `extra` seconds), saturating: 0 before the epoch,
    /// `UInt64.max` past the range, for generations, which are at least the wall clock.
    func generationMilliseconds(plusSeconds extra: Int64 = 0) -> UInt64 {
        let seconds = UInt64(clamping: seconds.addingReportingOverflow(extra).partialValue)
        let millis = seconds.multipliedReportingOverflow(by: 1000)
        guard !millis.overflow else { return .max }
        let total = millis.partialValue.addingReportingOverflow(UInt64(clamping: nanoseconds / 1_000_000))
        return total.overflow ? .max : total.partialValue
    }
}
