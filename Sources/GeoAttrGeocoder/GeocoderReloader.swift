public import GeoAttrCore
import GeoAttrLinux
public import Logging
public import ServiceLifecycle
import Synchronization

/// Keeps the geocoder index in service fresh: when its file is replaced (inotify) or on
/// request (SIGHUP), the new file is opened and validated off the concurrency pool, then
/// swapped in atomically: every lookup sees the old index or the new one, never a gap. A new
/// file that fails validation is refused and the old index stays in service.
///
/// It owns the index's part of the status: after every load it publishes what is in service
/// and what was refused, as one `IndexState`.
public struct GeocoderReloader: Service {
    public typealias Loader = @Sendable (String) throws -> any Geocoding

    private let path: String
    private let slot: GeocoderSlot
    private let load: Loader
    private let logger: Logger
    private let onWatching: @Sendable () -> Void
    private let publish: @Sendable (IndexState) -> Void
    private let beforeWatch: @Sendable () -> Void
    /// The file the last load read (or tried to), shared by the copies of this value.
    private let lastRead = LastRead()

    /// `publish` gets the index's state after every load that ends, for the status an operator reads.
    public init(
        path: String, slot: GeocoderSlot, logger: Logger, onWatching: @escaping @Sendable () -> Void = {},
        publish: @escaping @Sendable (IndexState) -> Void = { _ in }, load: @escaping Loader
    ) {
        self.init(
            path: path, slot: slot, logger: logger, onWatching: onWatching, beforeWatch: {}, publish: publish, load: load)
    }

    /// - Parameter beforeWatch: runs just before the watch is put in place (FileWatcher's seam).
    package init(
        path: String, slot: GeocoderSlot, logger: Logger, onWatching: @escaping @Sendable () -> Void,
        beforeWatch: @escaping @Sendable () -> Void, publish: @escaping @Sendable (IndexState) -> Void,
        load: @escaping Loader
    ) {
        self.beforeWatch = beforeWatch
        self.path = path
        self.slot = slot
        self.load = load
        self.logger = logger
        self.onWatching = onWatching
        self.publish = publish
    }

    /// Loads the index now; `false` (and the old one kept) if the file is missing or invalid.
    @discardableResult
    public func reload(reason: String) async -> Bool {
        let (path, load) = (path, load)
        // Taken before the load: a file replaced while it loads then differs, and is loaded again.
        lastRead.set(FileIdentity.of(path))
        let outcome = await offPool { () -> Result<any Geocoding, ReloadFailure> in
            do {
                return .success(try load(path))
            } catch {
                return .failure(ReloadFailure(description: "\(error)"))
            }
        }
        switch outcome {
        case .some(.success(let geocoder)):
            let previous = slot.geocoder?.indexVersion
            slot.replace(with: geocoder)
            publish(.loaded(version: geocoder.indexVersion))
            logger.info(
                "geocoder index in service",
                metadata: ["index": "\(geocoder.indexVersion)", "previous": "\(previous ?? "none")", "reason": "\(reason)"])
            return true
        case .some(.failure(let failure)):
            logger.error(
                "geocoder index refused, \(slot.geocoder == nil ? "serving location attributes only" : "the previous index stays in service"): \(failure.description)",
                metadata: ["path": "\(path)", "reason": "\(reason)"])
            publish(.refused(IndexRefusal(path: path, reason: failure.description), keeping: slot.geocoder?.indexVersion))
            return false
        case .none:
            logger.error("geocoder index not reloaded: no thread for the load")
            return false
        }
    }

    public func run() async {
        let (reloader, path, lastRead, onWatching) = (self, path, lastRead, onWatching)
        let changes = AsyncStream.makeStream(of: String.self, bufferingPolicy: .bufferingNewest(1))
        // The index in service found its file shrunk under it (the scheduler took it out of
        // service): the file is read again now, and again at each change, until it is whole.
        slot.onFailure { changes.continuation.yield("index changed under its mapping") }
        let watcher = FileWatcher(
            path: path, what: "index", logger: logger,
            onWatching: {
                // A file replaced between the last load and the watch being in place raises no
                // event: compare what the path names now with what was read.
                if FileIdentity.of(path) != lastRead.get() { changes.continuation.yield("file replaced") }
                onWatching()
            }, beforeWatch: beforeWatch
        ) {
            changes.continuation.yield("file replaced")
        }
        await withDiscardingTaskGroup { group in
            group.addTask { await watcher.run() }
            group.addTask {
                for await reason in changes.stream.cancelOnGracefulShutdown() {
                    await reloader.reload(reason: reason)
                }
            }
        }
    }
}

/// The identity of the file a load read, from the reloading task to the watch thread.
private final class LastRead: Sendable {
    private let identity = Mutex<FileIdentity?>(nil)

    func set(_ new: FileIdentity?) { identity.withLock { $0 = new } }

    func get() -> FileIdentity? { identity.withLock { $0 } }
}

struct ReloadFailure: Error, Sendable {
    var description: String
}
