public import GeoAttrModel
public import Logging
public import ServiceLifecycle

#if canImport(Glibc)
import Glibc
#endif

/// Watches the foreground/background state file with inotify.
///
/// The watch is on the file's directory, not the file, so it survives atomic replacement by
/// rename, deletion and re-creation. Content is `foreground` or `background` (surrounding
/// whitespace ignored); anything else is logged and ignored; an absent file means the
/// configured default. Each burst of events is drained before the file is read once, and only
/// a change is reported, so a supervisor flapping the file cannot flood the scheduler.
public struct StateFileWatcher: Service {
    public let path: String
    public let defaultState: PowerState
    private let logger: Logger
    private let onChange: @Sendable (PowerState) -> Void
    private let onWatching: @Sendable () -> Void

    /// - Parameter onWatching: called once the watch is in place (tests wait for it).
    public init(
        path: String, defaultState: PowerState, logger: Logger,
        onWatching: @escaping @Sendable () -> Void = {},
        onChange: @escaping @Sendable (PowerState) -> Void
    ) {
        self.path = path
        self.defaultState = defaultState
        self.logger = logger
        self.onChange = onChange
        self.onWatching = onWatching
    }

    /// What the file says now: its state, the default when absent, `nil` when its content is
    /// invalid (the caller keeps what it had). Logs why.
    public static func read(path: String, defaultState: PowerState, logger: Logger) -> PowerState? {
        let bytes: [UInt8]
        do throws(FileBytes.ReadError) {
            guard let read = try FileBytes.read(path, limit: 4096) else { return defaultState }
            bytes = read
        } catch {
            switch error {
            case .tooLarge:
                logger.warning("state file ignored: larger than 4 KiB", metadata: ["path": "\(path)"])
            case .system(let reason):
                logger.warning("state file unreadable: \(reason)", metadata: ["path": "\(path)"])
            }
            return nil
        }
        let text = String(decoding: bytes, as: UTF8.self)
        guard let state = PowerState(stateFileContent: text) else {
            logger.warning(
                "state file ignored: expected 'foreground' or 'background'",
                metadata: ["path": "\(path)", "content": "\(text.prefix(40).debugDescription)"])
            return nil
        }
        return state
    }

    public func run() async throws {
        guard let wake = WakePipe() else {
            logger.error("state file not watched: no descriptors for a wake pipe")
            return
        }
        let loop = WatchLoop(path: path, defaultState: defaultState, logger: logger, onWatching: onWatching, onChange: onChange)
        await withGracefulShutdownHandler {
            await withTaskCancellationHandler {
                _ = await offPool { loop.run(wakeFD: wake.readFD) }
            } onCancel: {
                wake.fire()
            }
        } onGracefulShutdown: {
            wake.fire()
        }
        wake.close()
    }
}

/// The blocking inotify loop, on a dedicated thread.
private struct WatchLoop: Sendable {
    let path: String
    let defaultState: PowerState
    let logger: Logger
    let onWatching: @Sendable () -> Void
    let onChange: @Sendable (PowerState) -> Void

    var directory: String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        let directory = String(path[..<slash])
        return directory.isEmpty ? "/" : directory
    }

    var fileName: String {
        guard let slash = path.lastIndex(of: "/") else { return path }
        return String(path[path.index(after: slash)...])
    }

    func run(wakeFD: Int32) {
        let inotify = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
        guard inotify >= 0 else {
            logger.error("state file not watched: inotify_init1 failed: \(FileBytes.errorText())")
            return
        }
        defer { close(inotify) }
        let mask = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_CREATE | IN_DELETE_SELF | IN_MOVE_SELF)
        guard inotify_add_watch(inotify, directory, mask) >= 0 else {
            logger.error(
                "state file not watched: cannot watch its directory: \(FileBytes.errorText())",
                metadata: ["directory": "\(directory)"])
            return
        }
        logger.debug("watching the state file", metadata: ["path": "\(path)"])
        var last = StateFileWatcher.read(path: path, defaultState: defaultState, logger: logger)
        onWatching()
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            var fds = [pollfd(fd: inotify, events: Int16(POLLIN), revents: 0), pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0)]
            let ready = poll(&fds, 2, -1)
            if ready < 0 {
                if errno == EINTR { continue }
                logger.error("state file watch ended: poll failed: \(FileBytes.errorText())")
                return
            }
            if fds[1].revents != 0 { return }
            var relevant = false
            var directoryGone = false
            // Drain everything queued before reading the file once.
            while true {
                let n = buffer.withUnsafeMutableBytes { read(inotify, $0.baseAddress, $0.count) }
                if n <= 0 { break }
                buffer.withUnsafeBytes { raw in
                    var offset = 0
                    let headerSize = MemoryLayout<inotify_event>.size
                    while offset + headerSize <= n {
                        let eventMask = raw.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self)
                        let nameLength = Int(raw.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
                        let nameStart = offset + headerSize
                        let nameEnd = min(n, nameStart + nameLength)
                        let nameBytes = raw[nameStart..<nameEnd].prefix { $0 != 0 }
                        if eventMask & UInt32(IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED) != 0 {
                            directoryGone = true
                        } else if String(decoding: nameBytes, as: UTF8.self) == fileName {
                            relevant = true
                        }
                        offset = nameStart + nameLength
                    }
                }
            }
            if directoryGone {
                logger.error(
                    "the state file's directory was removed or moved: state changes by file stop until restart",
                    metadata: ["directory": "\(directory)"])
                return
            }
            guard relevant else { continue }
            guard let state = StateFileWatcher.read(path: path, defaultState: defaultState, logger: logger) else { continue }
            if state != last {
                last = state
                onChange(state)
            }
        }
    }
}

/// A pipe that ends a blocking poll from another thread.
final class WakePipe: Sendable {
    let readFD: Int32
    let writeFD: Int32

    init?() {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { return nil }
        for fd in fds {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        }
        readFD = fds[0]
        writeFD = fds[1]
    }

    func fire() {
        var byte: UInt8 = 1
        _ = write(writeFD, &byte, 1)
    }

    func close() {
        _ = Glibc.close(readFD)
        _ = Glibc.close(writeFD)
    }
}
