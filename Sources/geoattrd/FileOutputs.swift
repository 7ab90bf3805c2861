import GeoAttrCore
import GeoAttrLinux
import GeoAttrModel
import GeoAttrServer
import Logging
import ServiceLifecycle
import Synchronization
import SystemWrites

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// For consumers that cannot talk to a socket: rewrites, atomically on every change, an env
/// file in the OTel form (`OTEL_RESOURCE_ATTRIBUTES=...`, for a collector's env detector or a
/// unit's EnvironmentFile=) and a Prometheus textfile-collector file. The same precision rules
/// apply: the files carry what `settings.grant` allows, and are rewritten at once when a reload
/// changes it.
final class FileOutputs: Service, Sendable {
    /// What a reload may change.
    struct Settings: Sendable, Hashable {
        var grant: Grant
        /// The files' group (the daemon must be a member); `nil`: the group a new file gets, the
        /// daemon's primary group or a set-group-ID directory's (/run/geoattrd/textfile's), which
        /// needs no membership.
        var group: UInt32?
        var mode: UInt32

        init(grant: Grant, group: UInt32? = nil, mode: UInt32 = 0o644) {
            self.grant = grant
            self.group = group
            self.mode = mode
        }
    }

    let envFile: String?
    let prometheusFile: String?
    private let settings: Mutex<Settings>
    private let changes: (stream: AsyncStream<Void>, continuation: AsyncStream<Void>.Continuation)
    private let ttl: Duration
    private let store: AttributeReader
    private let logger: Logger

    init(envFile: String?, prometheusFile: String?, settings: Settings, ttl: Duration, store: AttributeReader, logger: Logger) {
        self.envFile = envFile
        self.prometheusFile = prometheusFile
        self.settings = Mutex(settings)
        self.ttl = ttl
        self.store = store
        self.logger = logger
        changes = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// Applies reloaded settings: the files are rewritten at once when they change.
    func update(_ new: Settings) {
        let changed = settings.withLock { current in
            defer { current = new }
            return current != new
        }
        if changed { changes.continuation.yield() }
    }

    func run() async {
        guard envFile != nil || prometheusFile != nil else { return }
        let paths = [envFile, prometheusFile].compactMap { $0 }
        // A crash during a write leaves its temporary file (`PATH.tmp-PID...`) beside the output.
        let removed = await offPool { paths.flatMap { StaleTemporaries.removeTemporaries(of: $0) } }
        for path in removed ?? [] {
            logger.notice("removed a temporary output file left by an interrupted write", metadata: ["path": "\(path)"])
        }
        for path in paths { warnIfShared(directoryOf: path) }
        let store = store
        let changes = changes
        // One wake-up per new result or new settings; each writes what is current then.
        let wakeUps = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await _ in store.updates() { wakeUps.continuation.yield() }
                wakeUps.continuation.finish()
            }
            group.addTask {
                for await _ in changes.stream { wakeUps.continuation.yield() }
            }
            var written: (generation: UInt64, settings: Settings)?
            for await _ in wakeUps.stream.cancelOnGracefulShutdown() {
                guard let served = store.served else { continue }
                let current = settings.withLock { $0 }
                if let written, written.generation == served.result.generation, written.settings == current { continue }
                written = (served.result.generation, current)
                await write(served, with: current)
            }
            group.cancelAll()
        }
    }

    private func write(_ served: ServedResult, with settings: Settings) async {
        let view = AttributeView(served: served, grant: settings.grant, ttl: ttl, state: store.powerState)
        if let envFile {
            await write(Array(OTelResourceAttributes.environmentFile(view.attributes).utf8), to: envFile, settings)
        }
        if let prometheusFile {
            await write(AttributeFormat.prometheus.render(view.answer), to: prometheusFile, settings)
        }
    }

    private func write(_ bytes: [UInt8], to path: String, _ settings: Settings) async {
        let outcome = await offPool { () -> String? in
            do throws(AtomicFile.Failure) {
                try AtomicFile.replace(path, with: bytes, mode: settings.mode, group: settings.group)
                return nil
            } catch {
                return error.description
            }
        }
        if let failure = outcome ?? "no thread for the write" {
            logger.warning("output file not written: \(failure); retried at the next change", metadata: ["path": "\(path)"])
        }
    }

    /// Anyone who can write an output's directory can replace the file its readers trust.
    private func warnIfShared(directoryOf path: String) {
        let directory = PathComponents.split(path).directory
        var status = stat()
        guard stat(directory, &status) == 0 else { return }
        let sticky = status.st_mode & S_ISVTX != 0
        if status.st_mode & 0o022 != 0, !sticky {
            logger.warning(
                "output directory is writable by other users: they can replace the file its readers trust; use a directory only geoattrd writes",
                metadata: ["directory": "\(directory)"])
        }
    }
}
