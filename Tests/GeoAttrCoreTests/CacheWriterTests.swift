import Foundation
import GeoAttrCore
import GeoAttrLinux
import GeoAttrModel
import Logging
import Synchronization
import Testing
import TestSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A cache store whose writes fail with the given error text while it is set.
final class FailingCache: CacheStore {
    let failure = Mutex<String?>(nil)
    let saved = Mutex<[UInt64]>([])
    func load() throws(CacheFileError) -> LocationResult? { nil }
    func save(_ result: LocationResult) throws(CacheFileError) {
        if let reason = failure.withLock({ $0 }) { throw .unwritable(path: "/state/cache.json", reason: reason) }
        saved.withLock { $0.append(result.generation) }
    }
}

@Suite("CacheWriter")
struct CacheWriterTests {
    func write(_ writer: CacheWriter, generation: UInt64) async {
        writer.submit(LocationResult.sample(generation: generation))
        await writer.finishWriting(timeout: .seconds(10))
    }

    @Test("a failing write is logged once, again when its cause changes, and its end with the count")
    func failuresAreLoggedOnce() async throws {
        let log = RecordedLog()
        let cache = FailingCache()
        let writer = CacheWriter(store: cache, blockingWork: DedicatedThreadStarter(), logger: log.logger, failureReminder: .seconds(3600))
        await write(writer, generation: 1)
        #expect(cache.saved.withLock { $0 } == [1])

        cache.failure.withLock { $0 = "creating /state/cache.json.tmp-1: Read-only file system" }
        for generation in UInt64(2)...21 { await write(writer, generation: generation) }
        // Another step of the write, the same cause: not a new error.
        cache.failure.withLock { $0 = "renaming into place: Read-only file system" }
        await write(writer, generation: 22)
        #expect(log.count(.error, "Read-only file system") == 1)
        #expect(log.count(.debug, "cache write failed again") == 20)

        cache.failure.withLock { $0 = "creating /state/cache.json.tmp-1: No space left on device" }
        await write(writer, generation: 23)
        #expect(log.count(.error, "No space left on device") == 1)

        cache.failure.withLock { $0 = nil }
        await write(writer, generation: 24)
        #expect(log.count(.notice, "cache written again after 22 failed writes") == 1)
        #expect(cache.saved.withLock { $0 } == [1, 24])
        // A new run of failures after the recovery is logged again.
        cache.failure.withLock { $0 = "creating /state/cache.json.tmp-1: Read-only file system" }
        await write(writer, generation: 25)
        #expect(log.count(.error, "Read-only file system") == 2)
    }

    @Test("a failure that goes on is logged again once the reminder interval has passed")
    func lastingFailureIsRemindedOf() async throws {
        let log = RecordedLog()
        let cache = FailingCache()
        // A reminder interval of zero: every repeat is due.
        let writer = CacheWriter(store: cache, blockingWork: DedicatedThreadStarter(), logger: log.logger, failureReminder: .zero)
        cache.failure.withLock { $0 = "creating /state/cache.json.tmp-1: Read-only file system" }
        for generation in UInt64(1)...3 { await write(writer, generation: generation) }
        #expect(log.count(.error, "Read-only file system") == 3)
        #expect(log.count(.error, "still failing, 2 failed writes so far") == 1)
        #expect(log.count(.error, "still failing, 3 failed writes so far") == 1)
    }

    @Test("temporary files of dead writers are removed; a live writer's, and other files, are kept")
    func staleTemporaryFilesAreRemoved() async throws {
        let directory = try TemporaryDirectory()
        let cache = CacheFile(directory: directory.path)
        let finished = try ChildProcess(executable: "/bin/true", arguments: [])
        _ = await finished.waitAsync(timeout: .seconds(10))
        let dead = finished.pid
        for name in ["cache.json.tmp-\(dead)", "cache.json.tmp-1", "cache.json.tmp-\(getpid())", "cache.json.tmp-x", "cache.json.corrupt", "other.tmp-\(dead)"] {
            _ = try directory.write("{", to: name)
        }
        #expect(cache.removeStaleTemporaryFiles() == [directory.file("cache.json.tmp-\(dead)")])
        let left = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        #expect(left == ["cache.json.corrupt", "cache.json.tmp-1", "cache.json.tmp-\(getpid())", "cache.json.tmp-x", "other.tmp-\(dead)"].sorted())
    }
}
