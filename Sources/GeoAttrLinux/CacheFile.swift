import FoundationEssentials
public import GeoAttrCore
public import GeoAttrModel
import SystemWrites

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

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
            try AtomicFile.replace(path, with: Array(data))
        } catch {
            throw .unwritable(path: path, reason: error.description)
        }
    }

    /// Removes the temporary files of writes a crash interrupted (`cache.json.tmp-PID...` of PIDs
    /// that no longer run), which would otherwise pile up, one per crash. Call at start, before
    /// the first write. Returns the paths removed.
    public func removeStaleTemporaryFiles() -> [String] {
        StaleTemporaries.removeTemporaries(of: path)
    }

    private func setAside(reason: String) -> CacheFileError {
        if rename(path, setAsidePath) != 0 {
            return .corrupt(path: path, reason: "\(reason); setting it aside failed: \(ErrnoText.describe())")
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
