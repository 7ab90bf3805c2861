import GeoPlaces
import GeoAttrCore
import GeoAttrLinux
import GeoAttrModel
import Logging
import Synchronization
import Testing
import TestSupport

/// A scripted FixSource: the deliberate seam for scheduler tests. Each call takes the next
/// scripted outcome (the last one repeats), after `delay`; cancellation ends it like gpsd's.
final class ScriptedFixSource: FixSource {
    enum Outcome: Sendable {
        case fix(latitude: Double, longitude: Double)
        /// A fix taken within the looser bound at the end of an attempt.
        case fallback(latitude: Double, longitude: Double)
        case failure(FixError)
    }

    private let script: Mutex<[Outcome]>
    private let calls = Mutex(0)
    private let cancellations = Mutex(0)
    let delay: Duration

    init(_ script: [Outcome], delay: Duration = .milliseconds(20)) {
        self.script = Mutex(script)
        self.delay = delay
    }

    var callCount: Int { calls.withLock { $0 } }
    var cancelledCount: Int { cancellations.withLock { $0 } }

    func fix() async throws(FixError) -> Fix {
        calls.withLock { $0 += 1 }
        let outcome = script.withLock { script in script.count > 1 ? script.removeFirst() : script[0] }
        do {
            try await Task.sleep(for: delay)
        } catch {
            cancellations.withLock { $0 += 1 }
            throw .cancelled
        }
        switch outcome {
        case .fix(let latitude, let longitude):
            return Fix(latitude: latitude, longitude: longitude, mode: .threeDimensional, horizontalErrorMeters: 15,
                       timeSource: .systemClock, receivedAt: .now(), timeToFixMilliseconds: 20, origin: .gps)
        case .fallback(let latitude, let longitude):
            return Fix(latitude: latitude, longitude: longitude, mode: .threeDimensional, horizontalErrorMeters: 300,
                       timeSource: .systemClock, receivedAt: .now(), timeToFixMilliseconds: 20, origin: .gps, acceptedAsFallback: true)
        case .failure(let error):
            throw error
        }
    }
}

/// An in-memory cache store.
final class MemoryCache: CacheStore {
    let stored: Mutex<LocationResult?>
    let saves = Mutex(0)
    init(_ result: LocationResult? = nil) { stored = Mutex(result) }
    func load() throws(CacheFileError) -> LocationResult? { stored.withLock { $0 } }
    func save(_ result: LocationResult) throws(CacheFileError) {
        stored.withLock { $0 = result }
        saves.withLock { $0 += 1 }
    }
}

@Suite("Scheduler")
struct SchedulerTests {
    struct Harness {
        let scheduler: Scheduler
        let store: AttributeStore
        let source: ScriptedFixSource
        let task: Task<Void, Never>

        func stop() async {
            task.cancel()
            await task.value
        }
    }

    func start(
        _ source: ScriptedFixSource,
        configure: (inout ScheduleConfiguration) -> Void = { _ in },
        cache: MemoryCache = MemoryCache(),
        power: PowerState = .foreground,
        staticSource: StaticFixSource? = nil,
        geocoder: (any Geocoding)? = nil
    ) -> Harness {
        var configuration = ScheduleConfiguration()
        configuration.retryInitial = .milliseconds(100)
        configuration.retryMaximum = .milliseconds(400)
        configure(&configuration)
        let store = AttributeStore(powerState: power)
        let scheduler = Scheduler(
            configuration: configuration, fixSource: source, staticSource: staticSource, geocoders: GeocoderSlot(geocoder),
            cache: CacheWriter(store: cache, blockingWork: DedicatedThreadStarter(), logger: Logger(label: "test")),
            store: store, initialPower: power, logger: Logger(label: "test"), random: { 1 })
        let task = Task { await scheduler.run() }
        return Harness(scheduler: scheduler, store: store, source: source, task: task)
    }

    @Test func takesAFixAtStartAndPublishesAndPersistsIt() async {
        let cache = MemoryCache()
        let harness = start(ScriptedFixSource([.fix(latitude: 47.37, longitude: 8.54)]), cache: cache)
        #expect(await eventually { harness.store.served != nil })
        #expect(harness.store.served?.result.fix.latitude == 47.37)
        #expect(harness.store.served?.result.source == .gps)
        #expect(await eventually { cache.saves.withLock { $0 } == 1 })
        #expect(harness.store.status.scheduler.nextFixAt != nil)
        await harness.stop()
    }

    @Test("the status says when the last fix was a fallback")
    func statusMarksFallbackFixes() async {
        let source = ScriptedFixSource([.fallback(latitude: 1, longitude: 1), .fix(latitude: 2, longitude: 2)])
        let harness = start(source) { $0.ttl = .milliseconds(300) }
        // The result and the attempt that made it are published in one step: once the result
        // is served, its attempt is the status's last one (the next attempt is 300 ms away).
        #expect(await eventually { harness.store.served?.result.fix.latitude == 1 })
        #expect(harness.store.status.scheduler.lastAttempt?.fallback == true)
        #expect(await eventually { harness.store.served?.result.fix.latitude == 2 })
        #expect(harness.store.status.scheduler.lastAttempt?.fallback == false)
        await harness.stop()
    }

    @Test("a reload's static location is the fallback from the next failure on")
    func reloadedStaticLocationIsServed() async throws {
        let source = ScriptedFixSource([.failure(.timeout(timeoutSeconds: 1))])
        let first = try StaticFixSource(latitude: 10, longitude: 10)
        let harness = start(source, staticSource: first)
        #expect(await eventually { harness.store.served?.result.fix.latitude == 10 })
        await harness.stop()
        let again = start(ScriptedFixSource([.failure(.timeout(timeoutSeconds: 1))]))
        again.scheduler.setStaticLocation(try StaticFixSource(latitude: 20, longitude: 20))
        #expect(await eventually { again.store.served?.result.fix.latitude == 20 })
        await again.stop()
    }

    @Test func fixesAgainWhenTheResultIsOlderThanTheTTL() async {
        let harness = start(ScriptedFixSource([.fix(latitude: 1, longitude: 1)])) { $0.ttl = .milliseconds(300) }
        #expect(await eventually { harness.source.callCount >= 3 })
        let generations = harness.store.served?.result.generation ?? 0
        #expect(generations > 0)
        await harness.stop()
    }

    @Test("in the background: no attempt at all, and an attempt in flight is cancelled")
    func backgroundPausesAndCancels() async {
        let source = ScriptedFixSource([.fix(latitude: 1, longitude: 1)], delay: .seconds(30))
        let harness = start(source)
        #expect(await eventually { source.callCount == 1 })
        harness.scheduler.setPowerState(.background, origin: "test")
        #expect(await eventually { source.cancelledCount == 1 })
        #expect(await eventually { harness.store.status.scheduler.powerState == .background })
        #expect(harness.store.status.scheduler.nextFixAt == nil)
        #expect(!harness.store.status.scheduler.fixInFlight)
        #expect(source.callCount == 1)
        await harness.stop()
    }

    @Test("back in the foreground with a fresh result: waits out the TTL instead of fixing")
    func foregroundWithFreshResultWaits() async {
        let source = ScriptedFixSource([.fix(latitude: 1, longitude: 1)])
        let harness = start(source, configure: { $0.ttl = .seconds(3600) }, power: .background)
        harness.scheduler.setPowerState(.foreground, origin: "test")
        #expect(await eventually { source.callCount == 1 && harness.store.served != nil })
        harness.scheduler.setPowerState(.background, origin: "test")
        harness.scheduler.setPowerState(.foreground, origin: "test")
        #expect(await eventually { harness.store.status.scheduler.nextFixAt != nil })
        #expect(source.callCount == 1)
        await harness.stop()
    }

    @Test("refresh requests join a fix in flight; beyond the budget they are refused, never queued")
    func refreshCoalescingAndBudget() async {
        let source = ScriptedFixSource([.fix(latitude: 1, longitude: 1)], delay: .milliseconds(300))
        let harness = start(source, configure: { $0.refreshBurst = 2; $0.refreshInterval = .seconds(3600) }, power: .background)
        #expect(await harness.scheduler.requestRefresh(origin: "test") == .accepted)
        #expect(await harness.scheduler.requestRefresh(origin: "test") == .joined)
        #expect(await harness.scheduler.requestRefresh(origin: "test") == .joined)
        #expect(await eventually { harness.store.served != nil && !harness.store.status.scheduler.fixInFlight })
        #expect(await harness.scheduler.requestRefresh(origin: "test") == .accepted)
        #expect(await eventually { !harness.store.status.scheduler.fixInFlight && source.callCount == 2 })
        guard case .refused(let retryAfter) = await harness.scheduler.requestRefresh(origin: "test") else {
            Issue.record("expected the third forced fix to be refused")
            await harness.stop()
            return
        }
        #expect(retryAfter > .seconds(3000))
        #expect(source.callCount == 2)
        #expect(harness.store.status.scheduler.refreshesRefused == 1)
        #expect(harness.store.status.scheduler.refreshesAccepted == 2)
        await harness.stop()
    }

    @Test func aWaitingRefreshGetsTheNewResult() async {
        let source = ScriptedFixSource([.fix(latitude: 12.5, longitude: -70)])
        let harness = start(source, power: .background)
        let result = await withCheckedContinuation { continuation in
            Task { _ = await harness.scheduler.requestRefresh(origin: "test") { continuation.resume(returning: $0) } }
        }
        #expect((try? result.get())?.fix.latitude == 12.5)
        await harness.stop()
    }

    @Test("failed scheduled fixes are retried with backoff, and the last good result keeps being served")
    func failuresBackOffAndKeepTheLastResult() async {
        let source = ScriptedFixSource(
            [.fix(latitude: 1, longitude: 1), .failure(.noFix(timeoutSeconds: 1, reports: 3, bestErrorMeters: nil))])
        let harness = start(source) { $0.ttl = .milliseconds(50) }
        #expect(await eventually { source.callCount >= 4 })
        #expect(harness.store.served?.result.fix.latitude == 1)
        if case .noFix = harness.store.status.scheduler.lastAttempt?.error {} else {
            Issue.record("the last attempt should record the failure")
        }
        await harness.stop()
    }

    @Test("a persisted result younger than the TTL is served at once and no fix is taken")
    func persistedResultIsServedAtStart() async {
        var stored = LocationResult.sample()
        stored.updatedAt = .now()
        let source = ScriptedFixSource([.fix(latitude: 1, longitude: 1)])
        let harness = start(source, cache: MemoryCache(stored))
        #expect(harness.store.served?.result.source == .cache)
        #expect(harness.store.served?.result.generation == stored.generation)
        #expect(await eventually { harness.store.status.scheduler.nextFixAt != nil })
        #expect(source.callCount == 0)
        await harness.stop()
    }

    @Test("a persisted result older than the TTL is served, flagged by its age, and refreshed at once")
    func stalePersistedResultIsRefreshed() async {
        var stored = LocationResult.sample()
        stored.updatedAt = UTCTimestamp.now().adding(seconds: -7200)
        let source = ScriptedFixSource([.fix(latitude: 3, longitude: 3)])
        let harness = start(source, cache: MemoryCache(stored))
        #expect(harness.store.served?.result.source == .cache)
        #expect((harness.store.served?.age() ?? .zero) >= .seconds(7200))
        #expect(await eventually { harness.store.served?.result.fix.latitude == 3 })
        #expect((harness.store.served?.result.generation ?? 0) > stored.generation)
        await harness.stop()
    }

    @Test func aPersistedResultBeyondExpireAfterIsNotServed() async {
        var stored = LocationResult.sample()
        stored.updatedAt = UTCTimestamp.now().adding(seconds: -200_000)
        let harness = start(ScriptedFixSource([.failure(.timeout(timeoutSeconds: 1))]), cache: MemoryCache(stored))
        #expect(harness.store.served == nil)
        await harness.stop()
    }

    @Test("when the receiver cannot deliver and nothing is served, the static location is, labelled")
    func staticFallback() async throws {
        let fallback = try StaticFixSource(latitude: 46.2, longitude: 6.14)
        let harness = start(ScriptedFixSource([.failure(.gpsdUnreachable(endpoint: "x", reason: "refused"))]), staticSource: fallback)
        #expect(await eventually { harness.store.served != nil })
        #expect(harness.store.served?.result.source == .static)
        #expect(harness.store.served?.result.fix.latitude == 46.2)
        #expect(harness.store.status.scheduler.gpsdReachable == false)
        await harness.stop()
    }

    @Test("with the static location as the only source, it is fixed once per TTL, not in a loop")
    func staticOnlySourceRespectsTheTTL() async throws {
        let store = AttributeStore(powerState: .foreground)
        let source = try StaticFixSource(latitude: 46.2, longitude: 6.14)
        let scheduler = Scheduler(
            configuration: ScheduleConfiguration(), fixSource: source, staticSource: source, geocoders: GeocoderSlot(),
            cache: CacheWriter(store: MemoryCache(), blockingWork: DedicatedThreadStarter(), logger: Logger(label: "test")),
            store: store, initialPower: .foreground, logger: Logger(label: "test"))
        let task = Task { await scheduler.run() }
        #expect(await eventually { store.served != nil && store.status.scheduler.nextFixAt != nil })
        let generation = store.served?.result.generation
        try await Task.sleep(for: .milliseconds(200))
        #expect(store.served?.result.generation == generation, "the static source was fixed again before the TTL")
        #expect(store.served?.result.source == .static)
        task.cancel()
        await task.value
    }

    @Test("while the static fallback is served, the receiver keeps being retried on the backoff schedule")
    func fallbackKeepsRetryingTheReceiver() async throws {
        let fallback = try StaticFixSource(latitude: 46.2, longitude: 6.14)
        let source = ScriptedFixSource([
            .failure(.gpsdUnreachable(endpoint: "x", reason: "refused")), .fix(latitude: 7, longitude: 7),
        ])
        let harness = start(source, staticSource: fallback)
        #expect(await eventually { harness.store.served?.result.source == .static })
        #expect(await eventually { harness.store.served?.result.fix.latitude == 7 })
        #expect(harness.store.served?.result.source == .gps)
        await harness.stop()
    }

    @Test func geocodedPlacesAndGenerationsGrow() async {
        let source = ScriptedFixSource([.fix(latitude: 48, longitude: 4), .fix(latitude: 48, longitude: 4.5)])
        let harness = start(source, configure: { $0.ttl = .milliseconds(100) }, geocoder: BorderGeocoder())
        #expect(await eventually { (harness.store.served?.result.fix.longitude ?? 0) == 4.5 })
        #expect(harness.store.served?.result.place?.countryCode == "FR")
        #expect(harness.store.served?.result.indexVersion == "test-border 1")
        await harness.stop()
    }

    @Test func updatesStreamStartsWithTheCurrentValue() async {
        let harness = start(ScriptedFixSource([.fix(latitude: 9, longitude: 9)]))
        var iterator = harness.store.updates().makeAsyncIterator()
        var latitude: Double?
        while latitude == nil {
            guard let next = await iterator.next() else { break }
            latitude = next?.result.fix.latitude
        }
        #expect(latitude == 9)
        await harness.stop()
    }
}
