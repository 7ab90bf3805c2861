import GeoAttrCore
import GeoAttrLinux
import GeoAttrModel
import Dispatch
import Logging
import ServiceLifecycleTestKit
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

/// The cache file, whose saves wait until the test lets them go: the write of the last result
/// is still going when the shutdown begins, as a slow disk's fsync would be.
final class HeldCacheFile: CacheStore {
    let file: CacheFile
    private let saving = Atomic(false)
    /// Signalled once: the held save goes on.
    private let released = DispatchSemaphore(value: 0)

    init(_ file: CacheFile) {
        self.file = file
    }

    var isSaving: Bool { saving.load(ordering: .sequentiallyConsistent) }

    func release() { released.signal() }

    func load() throws(CacheFileError) -> LocationResult? { try file.load() }

    /// Runs on the cache writer's own thread, which it may hold (never more than a minute).
    func save(_ result: LocationResult) throws(CacheFileError) {
        saving.store(true, ordering: .sequentiallyConsistent)
        _ = released.wait(timeout: .now() + .seconds(60))
        try file.save(result)
    }
}

@Suite("Scheduler at a graceful shutdown")
struct SchedulerShutdownTests {
    let logger = Logger(label: "test")

    func scheduler(cache: any CacheStore, store: AttributeStore) -> Scheduler {
        Scheduler(
            configuration: ScheduleConfiguration(), fixSource: ScriptedFixSource([.fix(latitude: 46.9480, longitude: 7.4474)]),
            staticSource: nil, geocoders: GeocoderSlot(nil),
            cache: CacheWriter(store: cache, blockingWork: DedicatedThreadStarter(), logger: logger), store: store,
            initialPower: .foreground, logger: logger)
    }

    @Test("the scheduler's service ends only once the last result is in the cache file, which a restart serves")
    func lastResultIsWrittenBeforeTheServiceEnds() async throws {
        let directory = try TemporaryDirectory()
        let file = CacheFile(directory: directory.path)
        let held = HeldCacheFile(file)
        let store = AttributeStore(powerState: .foreground)
        var releasedAt = ContinuousClock.now
        let ended = try await runServiceGroup([scheduler(cache: held, store: store)], logger: logger) { trigger in
            #expect(await eventually { held.isSaving })
            trigger.triggerGracefulShutdown()
            // Time for a service that would not wait for the write to end first.
            try await Task.sleep(for: .milliseconds(300))
            releasedAt = .now
            held.release()
        }
        #expect(ended >= releasedAt, "the scheduler's service ended before the write of the last result")
        let served = try #require(store.served)
        let persisted = try #require(try file.load())
        #expect(persisted.generation == served.result.generation)
        #expect(persisted.fix.latitude == 46.9480 && persisted.fix.longitude == 7.4474)

        let restarted = AttributeStore(powerState: .foreground)
        _ = scheduler(cache: file, store: restarted)
        #expect(restarted.served?.result.generation == served.result.generation)
        #expect(restarted.served?.result.source == .cache)
    }
}
