package import Logging
import ServiceLifecycle
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Watches one file with inotify, through its directory, so that replacement by rename,
/// deletion and re-creation are all seen. Each burst of events is drained before `onChange`
/// runs once, so a writer flapping the file cannot flood the reader. The blocking loop runs on
/// a dedicated thread and ends at graceful shutdown or cancellation.
package struct FileWatcher: Sendable {
    let path: String
    /// What the file is, for log lines ("state file", "index").
    let what: String
    let logger: Logger
    let onWatching: @Sendable () -> Void
    let onChange: @Sendable () -> Void
    /// Runs on the watch thread just before the watch is put in place: the seam where tests
    /// change the file in the window a first read and the watch leave between them.
    let beforeWatch: @Sendable () -> Void

    package init(
        path: String, what: String, logger: Logger, onWatching: @escaping @Sendable () -> Void = {},
        beforeWatch: @escaping @Sendable () -> Void = {}, onChange: @escaping @Sendable () -> Void
    ) {
        self.path = path
        self.what = what
        self.logger = logger
        self.onWatching = onWatching
        self.beforeWatch = beforeWatch
        self.onChange = onChange
    }

    package func run() async {
        guard let wake = WakePipe() else {
            logger.error("\(what) not watched: no descriptors for a wake pipe")
            return
        }
        let loop = self
        await withGracefulShutdownHandler {
            await withTaskCancellationHandler {
                _ = await offPool { loop.watch(wakeFD: wake.readFD) }
            } onCancel: {
                wake.fire()
            }
        } onGracefulShutdown: {
            wake.fire()
        }
        wake.close()
    }

    var directory: String { PathComponents.split(path).directory }

    var fileName: String { PathComponents.split(path).name }

    private func watch(wakeFD: Int32) {
        let inotify = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
        guard inotify >= 0 else {
            logger.error("\(what) not watched: inotify_init1 failed: \(ErrnoText.describe())")
            return
        }
        defer { close(inotify) }
        beforeWatch()
        let mask = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_CREATE | IN_DELETE_SELF | IN_MOVE_SELF)
        guard inotify_add_watch(inotify, directory, mask) >= 0 else {
            logger.error(
                "\(what) not watched: cannot watch its directory: \(ErrnoText.describe())",
                metadata: ["directory": "\(directory)"])
            return
        }
        logger.debug("watching the \(what)", metadata: ["path": "\(path)"])
        onWatching()
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            var fds = [pollfd(fd: inotify, events: Int16(POLLIN), revents: 0), pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0)]
            let ready = poll(&fds, 2, -1)
            if ready < 0 {
                if errno == EINTR { continue }
                logger.error("\(what) watch ended: poll failed: \(ErrnoText.describe())")
                return
            }
            if fds[1].revents != 0 { return }
            var relevant = false
            var directoryGone = false
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
                        } else if eventMask & UInt32(IN_Q_OVERFLOW) != 0 {
                            // Events were dropped (a writer flooding the directory): the file may
                            // have changed among them, so it is read again.
                            relevant = true
                        } else if String(decoding: nameBytes, as: UTF8.self) == fileName {
                            relevant = true
                        }
                        offset = nameStart + nameLength
                    }
                }
            }
            if directoryGone {
                logger.error(
                    "the \(what)'s directory was removed or moved: changes to it are not seen until restart",
                    metadata: ["directory": "\(directory)"])
                return
            }
            if relevant { onChange() }
        }
    }
}
