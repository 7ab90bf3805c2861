import Logging
import Synchronization
import SystemWrites

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// One fuzzed entry point of the daemon. Set up once per process; `run` is called for every input.
protocol FuzzHarness: Sendable {
    /// Runs the daemon's code on one input. Returning normally is a pass; a trap is a finding.
    func run(_ input: [UInt8])
}

/// The harnesses, by the name `GEOATTR_FUZZ_TARGET` gives.
enum FuzzTarget: String, CaseIterable, Sendable {
    case http
    case httpSocket = "http-socket"
    case index
    case indexArrow = "index-arrow"
    case config
    case cache
    case state

    static let environmentVariable = "GEOATTR_FUZZ_TARGET"

    static var selected: FuzzTarget? {
        getenv(environmentVariable).flatMap { FuzzTarget(rawValue: String(cString: $0)) }
    }

    func makeHarness() throws -> any FuzzHarness {
        switch self {
        case .http: try HTTPRequestFuzz()
        case .httpSocket: try HTTPSocketFuzz()
        case .index: try IndexReaderFuzz()
        case .indexArrow: try IndexArrowFuzz()
        case .config: try ConfigLoaderFuzz()
        case .cache: try CacheFileFuzz()
        case .state: try StateFileFuzz()
        }
    }

    /// Valid inputs to start from (beyond the committed ones in Fuzz/seeds/TARGET), made by the
    /// daemon's own writers where there is one, so they follow the format as it is today.
    func generatedSeeds() throws -> [(name: String, bytes: [UInt8])] {
        switch self {
        case .http, .httpSocket: []
        case .index, .indexArrow: try IndexReaderFuzz.seeds()
        case .config: []
        case .cache: try CacheFileFuzz.seeds()
        case .state: []
        }
    }
}

/// Why a harness cannot start (not a finding: the fuzzer does not run at all).
struct HarnessSetupError: Error, CustomStringConvertible {
    var description: String
}

/// A directory of this process's own for the files the harnesses write, in memory when
/// /dev/shm exists; removed at exit.
enum Scratch {
    static let directory: String = {
        let base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp"
        let path = "\(base)/geoattr-fuzz-\(getpid())"
        mkdir(path, 0o700)
        atexit { Scratch.remove(Scratch.directory) }
        return path
    }()

    /// A path inside the scratch directory (created when `directory` is true).
    static func path(_ name: String, directory: Bool = false) -> String {
        let path = "\(Self.directory)/\(name)"
        if directory { mkdir(path, 0o700) }
        return path
    }

    /// Replaces the file's content (same inode, so a watcher would see a modification).
    static func write(_ bytes: [UInt8], to path: String) throws(HarnessSetupError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw HarnessSetupError(description: "cannot create \(path): errno \(errno)") }
        defer { close(fd) }
        do {
            try Descriptor.writeAll(bytes, to: fd)
        } catch {
            throw HarnessSetupError(description: "cannot write \(path): errno \(error.errno)")
        }
    }

    /// Removes a directory tree of regular files and directories.
    static func remove(_ path: String) {
        if let stream = opendir(path) {
            while let entry = readdir(stream) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                    String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
                }
                if name == "." || name == ".." { continue }
                let child = "\(path)/\(name)"
                if entry.pointee.d_type == UInt8(DT_DIR) { remove(child) } else { unlink(child) }
            }
            closedir(stream)
        }
        rmdir(path)
    }
}

/// A log handler that renders every message and its metadata, as a real one would (so the
/// code building them runs on fuzzed text), and then drops it.
struct DiscardingLogHandler: LogHandler {
    var metadata: Logger.Metadata = [:]
    var metadataProvider: Logger.MetadataProvider?
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var line = "\(event.level) \(event.message)"
        for (key, value) in event.metadata ?? [:] {
            line += " \(key)=\(value)"
        }
        DiscardingLogHandler.rendered.add(line.utf8.count, ordering: .relaxed)
    }

    /// Keeps the rendering from being optimised away.
    static let rendered = Atomic<Int>(0)

    static let logger = Logger(label: "geoattr-fuzz") { _ in DiscardingLogHandler() }
}

/// Runs async code to completion from the fuzzer's synchronous callback. `Task.immediate` runs
/// it on this thread up to its first real suspension, so code that never suspends (reading a
/// small file) costs no thread hop; the semaphore covers the rest.
func runBlocking<T: Sendable>(_ operation: sending @escaping () async -> T) -> T {
    let box = ResultBox<T>()
    Task.immediate {
        box.set(await operation())
    }
    return box.wait()
}

private final class ResultBox<T: Sendable>: Sendable {
    private let value = Mutex<T?>(nil)
    private let done = SemaphoreBox()

    func set(_ result: T) {
        value.withLock { $0 = result }
        done.signal()
    }

    func wait() -> T {
        while true {
            if let result = value.withLock({ $0 }) { return result }
            done.wait()
        }
    }
}

/// A POSIX semaphore, for a synchronous thread waiting on a task.
private final class SemaphoreBox: @unchecked Sendable {
    // sem_t is used only through sem_post/sem_wait, which are thread-safe.
    private let semaphore: UnsafeMutablePointer<sem_t>

    init() {
        semaphore = .allocate(capacity: 1)
        sem_init(semaphore, 0, 0)
    }

    deinit {
        sem_destroy(semaphore)
        semaphore.deallocate()
    }

    func signal() { sem_post(semaphore) }

    func wait() {
        while sem_wait(semaphore) != 0 && errno == EINTR {}
    }
}
