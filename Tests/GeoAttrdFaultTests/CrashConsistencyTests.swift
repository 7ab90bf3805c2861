import GeoPlaces
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

/// The cache across crashes: a torn file at start, kill -9 at random points while results are
/// being written, SIGTERM in the middle of writes. The file is always absent or one complete
/// document the daemon wrote, never goes back to an older one, and crashes leave no pile of
/// temporary files.
@Suite("fault: crash consistency", .serialized)
struct CrashConsistencyTests {
    /// A fix every 0.1 s and a refresh budget that never runs out, so that refreshes pipelined
    /// on one connection keep the cache writer busy: a kill lands in the middle of writes.
    static let busyConfig = FaultConfig.staticLocation
        + "schedule:\n  ttl_s: 0.1\n  expire_after_s: 3600\nrefresh:\n  burst: 10000\n  interval_s: 0.001\n"

    /// Inside the fixture index's country AA, region AA-N, at Bigcity: the cache carries a place.
    static let placedConfig = "gpsd:\n  enabled: false\nstatic:\n  latitude: 1.5\n  longitude: 1.0\n  error_m: 25\n"

    @Test("cache truncated at every byte offset: the loader sets it aside each time; the daemon logs it, sets it aside and serves fresh")
    func truncatedCache() async throws {
        let fixtureIndex = try FixtureIndex.withPostal.get()
        // A real cache, written by the daemon, with a place in it.
        let writer = try await FaultDaemon.start(config: Self.placedConfig, arguments: ["--index", fixtureIndex, "--log-level", "debug"])
        try await writer.daemon.waitForCachedResult()
        await writer.stop()
        let document = try StoredCache.bytes(writer.daemon.cacheFile)
        let original = try #require(try StoredCache.decode(document))
        #expect(original.place?.countryCode == "AA")
        #expect(document.count > 300, "\(document.count) bytes")

        // Every offset against the real loader, in-process.
        let scratch = try TemporaryDirectory(prefix: "truncated")
        let cache = CacheFile(directory: scratch.path)
        var misread: [Int] = []
        for offset in 0..<document.count {
            let truncated = Array(document[..<offset])
            try Fixture.writeBytes(truncated, to: cache.path)
            do throws(CacheFileError) {
                _ = try cache.load()
                misread.append(offset)
            } catch {
                guard case .corrupt(_, let reason) = error, reason.contains("moved to") else {
                    Issue.record("offset \(offset): \(error)")
                    continue
                }
                if FileManager.default.fileExists(atPath: cache.path) || (try? Fixture.readBytes(cache.setAsidePath)) != truncated {
                    Issue.record("offset \(offset): not set aside as it was")
                }
            }
        }
        #expect(misread.isEmpty, "the loader accepted a truncated cache at offsets \(misread.prefix(10))")
        try Fixture.writeBytes(document, to: cache.path)
        #expect(try cache.load() == original, "the complete file does not load")

        // A sample against the daemon: empty, ten spread, one byte short.
        let spread = (1...10).map { $0 * (document.count - 1) / 11 }
        for offset in [0] + spread + [document.count - 1] {
            let directory = try TemporaryDirectory(prefix: "fault-torn")
            try FileManager.default.createDirectory(atPath: directory.file("state"), withIntermediateDirectories: true)
            let truncated = Array(document[..<offset])
            try Fixture.writeBytes(truncated, to: directory.file("state/cache.json"))
            var fault = try await FaultDaemon.start(
                config: Self.placedConfig, arguments: ["--index", fixtureIndex, "--log-level", "debug"], directory: directory)
            let daemon = fault.daemon
            let corrupt = try #require(await daemon.waitForLog("is corrupt"), "offset \(offset): \(daemon.log.text)")
            #expect(corrupt.text.contains("moved to"), "offset \(offset): \(corrupt.text)")
            #expect(corrupt.text.contains(" error "), "offset \(offset): not logged as an error: \(corrupt.text)")
            #expect((try? Fixture.readBytes(daemon.cacheFile + ".corrupt")) == truncated, "offset \(offset): not set aside as it was")
            let served = try #require(await fault.served(), "offset \(offset)")
            #expect(served.source == "static", "offset \(offset): served \(served.source), not a fresh result")
            #expect(served.generation > original.generation, "offset \(offset)")
            #expect(served.attributes["geo.country.iso_code"] == .string("AA"), "offset \(offset)")
            // Written again, whole: a result as new as the one served, in a file the loader takes.
            try await daemon.waitForCacheGeneration(atLeast: served.generation)
            #expect(try StoredCache.load(daemon.cacheFile) != nil, "offset \(offset)")
            await fault.rememberServed()
            await fault.expectSurvived()
            await fault.stop()
        }
    }

    @Test("kill -9 at 200 random points, mostly in the middle of cache writes: always the old or the new complete file, no temporary files piling up")
    func killNineAtRandomPoints() async throws {
        let directory = try TemporaryDirectory(prefix: "fault-kill")
        let state = directory.file("state")
        var accepted: Set<UInt64> = []
        var lastGeneration: UInt64 = 0
        var leftTemporary = 0
        var killedWhileServing = 0
        let started = ContinuousClock.now
        for iteration in 0..<200 {
            let daemon = try DaemonProcess(config: Self.busyConfig, directory: directory, executable: ReleaseBinary.geoattrd)
            if iteration % 4 == 0 {
                // Anywhere in start-up: loading the cache, sweeping temporaries, binding, the first fix.
                try await Task.sleep(for: .microseconds(Int.random(in: 0..<40_000)))
            } else {
                // Serving, with refreshes pipelined on one connection: each one a new result to write.
                let connected = await eventually(timeout: .seconds(20), interval: .milliseconds(2)) {
                    !daemon.process.isRunning || (try? RawUnixConnection(path: daemon.socketPath)) != nil
                }
                #expect(connected && daemon.process.isRunning, "iteration \(iteration): not serving; log: \(daemon.log.text)")
                if let connection = try? RawUnixConnection(path: daemon.socketPath) {
                    connection.send(String(repeating: "POST /v1/refresh HTTP/1.1\r\nhost: x\r\ncontent-length: 0\r\n\r\n", count: 40))
                    try await Task.sleep(for: .microseconds(Int.random(in: 0..<25_000)))
                    killedWhileServing += 1
                }
            }
            daemon.process.signal(SIGKILL)
            let status = await daemon.process.waitAsync(timeout: .seconds(10))
            #expect(status == 128 + SIGKILL, "iteration \(iteration): exit \(status.map(String.init) ?? "none")")

            let temporaries = StoredCache.temporaryFiles(in: state)
            #expect(temporaries.count <= 1, "iteration \(iteration): temporary files pile up: \(temporaries)")
            if !temporaries.isEmpty { leftTemporary += 1 }
            guard FileManager.default.fileExists(atPath: daemon.cacheFile) else {
                #expect(lastGeneration == 0, "iteration \(iteration): the cache disappeared")
                continue
            }
            let stored: (result: LocationResult, bytes: [UInt8])
            do {
                guard let loaded = try StoredCache.load(daemon.cacheFile) else { continue }
                stored = loaded
            } catch {
                Issue.record("iteration \(iteration): the cache is not a complete document: \(error)")
                break
            }
            let generation = stored.result.generation
            #expect(try StoredCache.canonicalBytes(of: stored.result) == stored.bytes, "iteration \(iteration): not byte for byte what the writer writes")
            #expect(generation >= lastGeneration, "iteration \(iteration): the cache went back from \(lastGeneration) to \(generation)")
            // A result this daemon (or an earlier one) accepted and logged before it was killed.
            let logged = await eventually(timeout: .seconds(5)) {
                accepted.contains(generation) || StoredCache.acceptedGenerations(daemon.log).contains(generation)
            }
            #expect(logged, "iteration \(iteration): generation \(generation) in the cache was never accepted")
            accepted.formUnion(StoredCache.acceptedGenerations(daemon.log))
            lastGeneration = generation
        }
        let elapsed = ContinuousClock.now - started
        // The scenario must have hit the window it is about: kills in the middle of a write.
        #expect(leftTemporary > 0, "no kill landed in the middle of a write (\(killedWhileServing) kills while serving)")
        print("kill -9 x200: \(elapsed), \(killedWhileServing) while serving, \(leftTemporary) left a temporary file, \(accepted.count) results accepted")

        // The next start sweeps the last crash's temporary file, loads the cache and serves it.
        let hadTemporary = !StoredCache.temporaryFiles(in: state).isEmpty
        let fault = try await FaultDaemon.start(config: Self.busyConfig, directory: directory)
        #expect(StoredCache.temporaryFiles(in: state).isEmpty)
        if hadTemporary {
            #expect(fault.daemon.count("removed a temporary cache file left by an interrupted write") == 1, "\(fault.daemon.log.text)")
        }
        #expect(fault.daemon.count("is corrupt") == 0)
        await fault.expectSurvived()
        await fault.stop()
    }

    @Test("SIGTERM in the middle of cache writes: a clean exit, and the cache holds the last result accepted")
    func sigtermDuringWrites() async throws {
        for round in 0..<10 {
            let fault = try await FaultDaemon.start(config: Self.busyConfig, arguments: ["--log-level", "debug"])
            let daemon = fault.daemon
            let hammer = RefreshHammer(socketPath: daemon.socketPath)
            try await daemon.waitForRefreshAccepted(after: 0)
            try await Task.sleep(for: .microseconds(Int.random(in: 0..<50_000)))
            await fault.stop()
            hammer.stop()
            // The last result accepted is read from the log: all of it, once it has ended.
            try await daemon.waitForLogEnd()
            let last = try #require(
                daemon.log.all.last { $0.text.contains("fix accepted") }.flatMap { line in
                    line.text.range(of: "generation=").flatMap { UInt64(line.text[$0.upperBound...].prefix { $0.isNumber }) }
                })
            let stored = try #require(try StoredCache.load(daemon.cacheFile), "round \(round): no cache")
            #expect(stored.result.generation == last, "round \(round): the cache holds \(stored.result.generation), the last result accepted was \(last)")
            #expect(try StoredCache.canonicalBytes(of: stored.result) == stored.bytes)
            #expect(StoredCache.temporaryFiles(in: daemon.stateDirectory).isEmpty, "round \(round): a temporary file was left")
        }
    }
}

/// Pipelines `POST /v1/refresh` on one connection until stopped or the daemon goes away:
/// every request a new result, so a new cache write.
final class RefreshHammer: Sendable {
    private let task: Task<Void, Never>

    init(socketPath: String) {
        task = Task {
            guard let connection = try? RawUnixConnection(path: socketPath) else { return }
            let batch = String(repeating: "POST /v1/refresh HTTP/1.1\r\nhost: x\r\ncontent-length: 0\r\n\r\n", count: 5)
            while !Task.isCancelled {
                guard connection.send(batch) else { return }
                if await connection.read(timeout: .milliseconds(5)).closed { return }
            }
        }
    }

    func stop() {
        task.cancel()
    }
}
