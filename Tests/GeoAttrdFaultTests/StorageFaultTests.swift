import Foundation
import GeoAttrCore
import GeoAttrLinux
import GeoAttrModel
import Testing
import TestSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The state directory under real file-system faults: a tmpfs remounted read-only, a tmpfs
/// filled up, the directory removed. The daemon keeps serving, logs the failure once (not at
/// every fix), never leaves a half-written or temporary file, and writes the cache again as soon
/// as the directory is usable.
@Suite("fault: storage", .serialized)
struct StorageFaultTests {
    /// The static location with a fix (so a cache write) every 0.2 s.
    static let config = FaultConfig.staticLocation + "schedule:\n  ttl_s: 0.2\n  expire_after_s: 3600\n"
    static let debug = ["--log-level", "debug"]

    @Test("state directory remounted read-only: served on, one error, nothing half-written, written again once writable",
          .enabled(if: TmpfsMount.available, "mounting a tmpfs needs root (CAP_SYS_ADMIN): the fault cannot be injected"))
    func readOnlyStateDirectory() async throws {
        let directory = try TemporaryDirectory(prefix: "fault-ro")
        let state = directory.file("state")
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
        let tmpfs = try TmpfsMount(at: state, size: "1m")
        defer { tmpfs.unmount(); withExtendedLifetime(directory) {} }
        let fault = try await FaultDaemon.start(config: Self.config, arguments: Self.debug, directory: directory)
        let daemon = fault.daemon
        try await daemon.waitForCachedResult()

        let start = daemon.log.all.count
        #expect(tmpfs.remount(readOnly: true), "remount read-only: \(String(cString: strerror(errno)))")
        let failed = try #require(await daemon.waitForLog("cannot write the cache file", from: start))
        #expect(failed.text.contains("Read-only file system"), "\(failed.text)")
        #expect(failed.text.contains(" error "), "not logged as an error: \(failed.text)")
        let frozen = try StoredCache.bytes(daemon.cacheFile)
        await StorageFault.expectRateLimited(daemon, since: failed.index)
        #expect(try StoredCache.bytes(daemon.cacheFile) == frozen, "the cache changed on a read-only file system")
        #expect(StoredCache.temporaryFiles(in: state).isEmpty)
        await fault.expectSurvived()

        #expect(tmpfs.remount(readOnly: false), "remount read-write: \(String(cString: strerror(errno)))")
        try await StorageFault.expectWrittenAgain(daemon, since: failed.index, over: frozen)
        await fault.expectSurvived()
        await fault.stop()
    }

    @Test("state directory full (16 KiB tmpfs filled): served on, one error, nothing half-written, written again once space is freed",
          .enabled(if: TmpfsMount.available, "mounting a tmpfs needs root (CAP_SYS_ADMIN): the fault cannot be injected"))
    func fullStateDirectory() async throws {
        let directory = try TemporaryDirectory(prefix: "fault-full")
        let state = directory.file("state")
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
        let tmpfs = try TmpfsMount(at: state, size: "16k")
        defer { tmpfs.unmount(); withExtendedLifetime(directory) {} }
        let fault = try await FaultDaemon.start(config: Self.config, arguments: Self.debug, directory: directory)
        let daemon = fault.daemon
        try await daemon.waitForCachedResult()

        // Fill it. A write of the daemon's that got its page just before the file system filled
        // frees the old file's page when it renames: top up until a write fails for want of space.
        let filler = "\(state)/filler"
        let start = daemon.log.all.count
        var failed: LineRecorder.Line?
        for _ in 0..<20 where failed == nil {
            let added = try Filler.fill(filler)
            #expect(added >= 0)
            failed = await daemon.waitForLog("cannot write the cache file", from: start, timeout: .seconds(2))
        }
        let failure = try #require(failed, "no write failed on the full file system; log: \(daemon.log.text.suffix(2000))")
        #expect(failure.text.contains("No space left on device"), "\(failure.text)")
        let frozen = try StoredCache.bytes(daemon.cacheFile)
        await StorageFault.expectRateLimited(daemon, since: failure.index)
        #expect(try StoredCache.bytes(daemon.cacheFile) == frozen, "the cache changed on a full file system")
        #expect(StoredCache.temporaryFiles(in: state).isEmpty, "temporary files left on the full file system")
        await fault.expectSurvived()

        #expect(unlink(filler) == 0)
        try await StorageFault.expectWrittenAgain(daemon, since: failure.index, over: frozen)
        await fault.expectSurvived()
        await fault.stop()
    }

    @Test("state directory removed while running: served on, one error, written again once it exists again")
    func removedStateDirectory() async throws {
        let fault = try await FaultDaemon.start(config: Self.config, arguments: Self.debug)
        let daemon = fault.daemon
        try await daemon.waitForCachedResult()
        let start = daemon.log.all.count
        try FileManager.default.removeItem(atPath: daemon.stateDirectory)
        let failed = try #require(await daemon.waitForLog("cannot write the cache file", from: start))
        #expect(failed.text.contains("No such file or directory"), "\(failed.text)")
        await StorageFault.expectRateLimited(daemon, since: failed.index)
        await fault.expectSurvived()

        #expect(mkdir(daemon.stateDirectory, 0o755) == 0)
        try await StorageFault.expectWrittenAgain(daemon, since: failed.index, over: nil)
        #expect(StoredCache.temporaryFiles(in: daemon.stateDirectory).isEmpty)
        await fault.expectSurvived()
        await fault.stop()
    }
}

/// Checks shared by the storage scenarios.
enum StorageFault {
    /// At least ten fixes after the first failure, each retrying the write: still one error
    /// line, and the retries were made (logged at debug).
    static func expectRateLimited(_ daemon: DaemonProcess, since index: Int, sourceLocation: SourceLocation = #_sourceLocation) async {
        let fixes = await eventually(timeout: .seconds(30), interval: .milliseconds(50)) {
            daemon.log.all.dropFirst(index + 1).filter { $0.text.contains("fix accepted") }.count >= 10
        }
        #expect(fixes, "fewer than ten fixes while the state directory was unusable; log: \(daemon.log.text.suffix(2000))", sourceLocation: sourceLocation)
        let retried = await eventually(timeout: .seconds(10), interval: .milliseconds(50)) {
            daemon.log.all.dropFirst(index + 1).filter { $0.text.contains("cache write failed again") }.count >= 5
        }
        #expect(retried, "the failed write was not retried at each fix; log: \(daemon.log.text.suffix(2000))", sourceLocation: sourceLocation)
        let errors = daemon.log.all.dropFirst(index).filter { $0.text.contains("cannot write the cache file") }
        #expect(errors.count == 1, "the write failure was logged \(errors.count) times, not once: \(errors.prefix(3).map(\.text))", sourceLocation: sourceLocation)
    }

    /// The first write after the fault is logged with the number of failed writes, and the file
    /// is a newer complete document than `frozen` (the file during the fault).
    static func expectWrittenAgain(_ daemon: DaemonProcess, since index: Int, over frozen: [UInt8]?, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let recovered = try #require(await daemon.waitForLog("cache written again", from: index), "\(daemon.log.text.suffix(2000))", sourceLocation: sourceLocation)
        let failures = recovered.text.range(of: "again after ").flatMap { Int(recovered.text[$0.upperBound...].prefix { $0.isNumber }) }
        #expect((failures ?? 0) >= 10, "\(recovered.text)", sourceLocation: sourceLocation)
        let stored = try #require(try StoredCache.load(daemon.cacheFile), "no cache after the directory came back", sourceLocation: sourceLocation)
        if let frozen, let before = try StoredCache.decode(frozen) {
            #expect(stored.result.generation > before.generation, "the cache was not rewritten", sourceLocation: sourceLocation)
        }
    }
}

/// A small tmpfs over a directory, for file-system faults that root can inject for real. It is
/// unmounted lazily (a daemon's open descriptor cannot keep it busy) by `unmount()`, which a
/// test defers, or when released.
final class TmpfsMount {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    let path: String
    let size: String
    private var mounted = true

    /// Whether this process may mount a tmpfs (root with CAP_SYS_ADMIN): tried once on a scratch
    /// directory.
    static let available: Bool = {
        guard let probe = try? TemporaryDirectory(prefix: "mount-probe") else { return false }
        guard mount("tmpfs", probe.path, "tmpfs", 0, "size=4k") == 0 else { return false }
        umount2(probe.path, Int32(MNT_DETACH))
        return true
    }()

    init(at path: String, size: String) throws {
        guard mount("tmpfs", path, "tmpfs", 0, "size=\(size),mode=0755") == 0 else {
            throw Failure(description: "mounting a tmpfs on \(path): \(String(cString: strerror(errno)))")
        }
        self.path = path
        self.size = size
    }

    func remount(readOnly: Bool) -> Bool {
        mount("tmpfs", path, "tmpfs", UInt(MS_REMOUNT) | (readOnly ? UInt(MS_RDONLY) : 0), "size=\(size),mode=0755") == 0
    }

    func unmount() {
        guard mounted else { return }
        mounted = false
        umount2(path, Int32(MNT_DETACH))
    }

    deinit {
        unmount()
    }
}

/// Fills a file system by appending to one file until it refuses.
enum Filler {
    /// Appends 4 KiB blocks to `path` until the file system is full; the bytes added.
    static func fill(_ path: String) throws -> Int {
        let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw TmpfsMount.Failure(description: "open \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        let block = [UInt8](repeating: 0x55, count: 4096)
        var added = 0
        while true {
            let n = block.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if n <= 0 { break }
            added += n
        }
        return added
    }
}

/// The cache file as the tests read it: its bytes, and what the daemon's own loader makes of it.
enum StoredCache {
    static func bytes(_ path: String) throws -> [UInt8] {
        try Fixture.readBytes(path)
    }

    /// The result in `path`, read by the daemon's loader on a copy (the loader moves a corrupt
    /// file aside); `nil` when there is no file. Throws when the loader refuses it.
    static func load(_ path: String) throws -> (result: LocationResult, bytes: [UInt8])? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        let bytes = try Fixture.readBytes(path)
        guard let result = try decode(bytes) else { return nil }
        return (result, bytes)
    }

    /// `bytes` as the daemon's loader reads a cache file holding them.
    static func decode(_ bytes: [UInt8]) throws -> LocationResult? {
        let scratch = try TemporaryDirectory(prefix: "cache-copy")
        try Fixture.writeBytes(bytes, to: scratch.file(CacheFile.fileName))
        return try CacheFile(directory: scratch.path).load()
    }

    /// What the daemon's writer makes of `result`: the canonical bytes of a complete cache file.
    static func canonicalBytes(of result: LocationResult) throws -> [UInt8] {
        let scratch = try TemporaryDirectory(prefix: "cache-canonical")
        try CacheFile(directory: scratch.path).save(result)
        return try Fixture.readBytes(scratch.file(CacheFile.fileName))
    }

    /// `cache.json.tmp-*` files in `directory` (left by an interrupted write).
    static func temporaryFiles(in directory: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [])
            .filter { $0.hasPrefix(CacheFile.fileName + ".tmp-") }.sorted()
    }

    /// The generations of the results a daemon logged ("fix accepted ... generation=N").
    static func acceptedGenerations(_ log: LineRecorder) -> Set<UInt64> {
        Set(log.all.compactMap { line -> UInt64? in
            guard line.text.contains("fix accepted"), let range = line.text.range(of: "generation=") else { return nil }
            return UInt64(line.text[range.upperBound...].prefix { $0.isNumber })
        })
    }
}
