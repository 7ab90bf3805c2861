public import GeoAttrModel
public import Logging
public import ServiceLifecycle
import Synchronization
import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Watches the foreground/background state file with inotify.
///
/// The watch is on the file's directory, not the file, so it survives atomic replacement by
/// rename, deletion and re-creation. Content is `foreground` or `background` (surrounding
/// whitespace ignored); anything else is logged and ignored; an absent or empty file means the
/// configured default. A symbolic link, FIFO or device at the path is refused, never opened
/// for reading. Each burst of events is drained before the file is read once, and only
/// a change is reported, so a supervisor flapping the file cannot flood the scheduler.
public struct StateFileWatcher: Service {
    public let path: String
    public let defaultState: PowerState
    private let logger: Logger
    private let onChange: @Sendable (PowerState) -> Void
    private let onWatching: @Sendable () -> Void
    private let beforeWatch: @Sendable () -> Void
    private let knownState: PowerState?

    /// - Parameters:
    ///   - knownState: the state the caller already read from the file and acts on; the watcher
    ///     reports any other it finds, also one written before it ran. `nil`: what the file says
    ///     when the watcher starts.
    ///   - onWatching: called once the watch is in place (tests wait for it).
    public init(
        path: String, defaultState: PowerState, knownState: PowerState? = nil, logger: Logger,
        onWatching: @escaping @Sendable () -> Void = {},
        onChange: @escaping @Sendable (PowerState) -> Void
    ) {
        self.init(
            path: path, defaultState: defaultState, knownState: knownState, logger: logger, onWatching: onWatching, beforeWatch: {},
            onChange: onChange)
    }

    /// - Parameter beforeWatch: runs just before the watch is put in place (FileWatcher's seam).
    package init(
        path: String, defaultState: PowerState, knownState: PowerState?, logger: Logger,
        onWatching: @escaping @Sendable () -> Void, beforeWatch: @escaping @Sendable () -> Void,
        onChange: @escaping @Sendable (PowerState) -> Void
    ) {
        self.path = path
        self.defaultState = defaultState
        self.logger = logger
        self.onChange = onChange
        self.onWatching = onWatching
        self.beforeWatch = beforeWatch
        self.knownState = knownState
    }

    /// What the file says now: its state, the default when absent (or empty, with
    /// `emptyMeansDefault`), `nil` when its content is invalid or it is not a regular file (the
    /// caller keeps what it had). Logs why, never the content: whoever can write the file could
    /// otherwise write into the journal.
    ///
    /// - Parameter emptyMeansDefault: at start, an empty file (as tmpfiles creates it) means
    ///   the default; while running, a supervisor writing in place truncates before it writes,
    ///   and a read in between must not flip the state: then empty keeps what the caller has.
    public static func read(path: String, defaultState: PowerState, logger: Logger, emptyMeansDefault: Bool = true) -> PowerState? {
        let bytes: [UInt8]
        do throws(FileBytes.ReadError) {
            guard let read = try FileBytes.read(path, limit: 4096) else { return defaultState }
            bytes = read
        } catch {
            switch error {
            case .tooLarge:
                // /run is a tmpfs the whole system shares: a file nobody may act on gives its space
                // back at once, however it was written.
                let emptied = emptyOversized(path)
                logger.warning(
                    "state file ignored: larger than 4 KiB; \(emptied ? "emptied" : "could not be emptied")", metadata: ["path": "\(path)"])
            case .notRegular(let kind):
                logger.warning("state file refused: \(kind), not a regular file; the state is left as it was", metadata: ["path": "\(path)"])
            case .system(let reason):
                logger.warning("state file unreadable: \(reason)", metadata: ["path": "\(path)"])
            }
            return nil
        }
        let text = String(decoding: bytes, as: UTF8.self)
        if text.trimmingWhitespace().isEmpty { return emptyMeansDefault ? defaultState : nil }
        guard let state = PowerState(stateFileContent: text) else {
            logger.warning("state file ignored: expected 'foreground' or 'background'", metadata: ["path": "\(path)", "bytes": "\(bytes.count)"])
            return nil
        }
        return state
    }

    /// Truncates the regular file at `path` to nothing, never following a link.
    static func emptyOversized(_ path: String) -> Bool {
        do {
            let file = try FileDescriptor.open(FilePath(path), .writeOnly, options: [.closeOnExec, .noFollow, .nonBlocking])
            defer { try? file.close() }
            guard try file.stat().type == .regular else { return false }
            try file.resize(to: 0)
            return true
        } catch {
            return false
        }
    }

    public func run() async throws {
        let (path, defaultState, logger, onChange, onWatching) = (path, defaultState, logger, onChange, onWatching)
        let beforeWatch = beforeWatch
        let last = LastState(knownState ?? StateFileWatcher.read(path: path, defaultState: defaultState, logger: logger))
        let readAgain: @Sendable () -> Void = {
            guard let state = StateFileWatcher.read(path: path, defaultState: defaultState, logger: logger, emptyMeansDefault: false),
                last.replace(with: state)
            else { return }
            onChange(state)
        }
        // A write between the first read and the watch being in place raises no event: read the
        // file once more when the watch is there, or that write would wait for the next one.
        let watcher = FileWatcher(
            path: path, what: "state file", logger: logger,
            onWatching: {
                readAgain()
                onWatching()
            }, beforeWatch: beforeWatch, onChange: readAgain)
        await watcher.run()
    }
}

/// The last state read from the file, shared with the watch thread.
private final class LastState: Sendable {
    private let state: Mutex<PowerState?>
    init(_ state: PowerState?) { self.state = Mutex(state) }

    /// Stores `new`; `true` if it differs from what was there.
    func replace(with new: PowerState) -> Bool {
        state.withLock { state in
            defer { state = new }
            return state != new
        }
    }
}
