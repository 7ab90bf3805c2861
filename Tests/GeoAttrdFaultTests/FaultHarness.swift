import Foundation
import GeoAttrClient
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

/// One fault scenario's daemon: the release build, started and serving, with the resources it
/// held and the result it served before the fault, so that `expectSurvived` can check the four
/// promises of the fault suite after it: still running and answering, serving the last good
/// result or a newer one, the cache never half-written, no descriptor, thread or child leaked.
struct FaultDaemon {
    let daemon: DaemonProcess
    let client: GeoAttrClient
    private(set) var baseline: ProcessResources
    private(set) var lastGood: AttributesDocument?

    /// Starts the release geoattrd with `config` and waits until it has trapped its signals and
    /// its socket answers; with
    /// `waitForResult`, until it serves a result, which becomes the last good one. `launcher`
    /// runs it through a command that execs it (e.g. `prlimit --nofile=...`), keeping its pid.
    static func start(
        config: String, arguments: [String] = [], environment: [String: String] = [:],
        directory: TemporaryDirectory? = nil, waitForResult: Bool = true, launcher: [String] = [],
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> FaultDaemon {
        try #require(ReleaseBinary.isBuilt, "no release build at \(ReleaseBinary.geoattrd): run scripts/fault-suite.sh", sourceLocation: sourceLocation)
        let daemon = try DaemonProcess(
            config: config, arguments: arguments, directory: directory, environment: environment,
            launcher: launcher, executable: ReleaseBinary.geoattrd)
        try await daemon.waitUntilSignalsAreTrapped()
        let client = GeoAttrClient(socketPath: daemon.socketPath, timeout: .seconds(10))
        // Any answer will do (a 503 before the first result): the scenarios' requests reach it.
        let answering = await eventually(timeout: .seconds(20)) { (try? await client.status()) != nil }
        try #require(answering, "the socket does not answer; daemon log: \(daemon.log.text)", sourceLocation: sourceLocation)
        var lastGood: AttributesDocument?
        if waitForResult {
            let served = await eventually(timeout: .seconds(60)) { (try? await client.attributes()) != nil }
            try #require(served, "no result served; daemon log: \(daemon.log.text)", sourceLocation: sourceLocation)
            lastGood = try await client.attributes()
        }
        // The baseline once the daemon holds its two file watches (the state file's directory
        // and the index's, each set up on a thread of its own, which may come after the first
        // result) and start-up threads and descriptors have settled: the same in two readings
        // 100 ms apart.
        let watches = { ProcessResources.of(daemon.process.pid)?.descriptors.filter { $0 == "anon_inode:inotify" }.count ?? 0 }
        let watching = await eventually(timeout: .seconds(20)) { watches() >= 2 }
        try #require(watching, "geoattrd holds \(watches()) file watches, not 2; daemon log: \(daemon.log.text)", sourceLocation: sourceLocation)
        var previous = ProcessResources.of(daemon.process.pid)
        _ = await eventually(timeout: .seconds(5), interval: .milliseconds(100)) {
            let now = ProcessResources.of(daemon.process.pid)
            defer { previous = now }
            return now != nil && now == previous
        }
        let baseline = try #require(ProcessResources.of(daemon.process.pid), "geoattrd exited at start", sourceLocation: sourceLocation)
        return FaultDaemon(daemon: daemon, client: client, baseline: baseline, lastGood: lastGood)
    }

    /// The served document now, `nil` if the daemon does not answer with one.
    func served() async -> AttributesDocument? {
        try? await client.attributes()
    }

    /// Records what is served now as the last good result (after a scenario's expected update).
    mutating func rememberServed() async {
        if let document = await served() { lastGood = document }
    }

    /// Takes a new baseline (after a scenario deliberately changed what the daemon holds).
    mutating func rebaseline() {
        if let resources = ProcessResources.of(daemon.process.pid) { baseline = resources }
    }

    /// The fault suite's promises, checked after a fault. Descriptors and threads get `settle`
    /// to come back to the baseline (connections closing, pool threads retiring).
    func expectSurvived(
        settle: Duration = .seconds(10), threadSlack: Int = 4, sourceLocation: SourceLocation = #_sourceLocation
    ) async {
        #expect(daemon.process.isRunning, "geoattrd died; log: \(daemon.log.text)", sourceLocation: sourceLocation)
        let document = await served()
        if let lastGood {
            #expect(document != nil, "geoattrd stopped answering; log: \(daemon.log.text)", sourceLocation: sourceLocation)
            if let document {
                // As times, not strings: the text drops a zero fraction ("...:01Z" sorts after "...:01.5Z").
                let servedTime = UTCTimestamp(iso8601: document.fixTime), goodTime = UTCTimestamp(iso8601: lastGood.fixTime)
                #expect(
                    servedTime.flatMap { served in goodTime.map { !(served < $0) } } == true,
                    "served \(document.fixTime), older than the last good \(lastGood.fixTime)", sourceLocation: sourceLocation)
                #expect(
                    document.generation >= lastGood.generation,
                    "served generation \(document.generation), older than the last good \(lastGood.generation)", sourceLocation: sourceLocation)
                #expect(document.attributes["geo.location.lat"] != nil, "served a document without a position", sourceLocation: sourceLocation)
            }
        } else {
            // Nothing was served before the fault: the daemon must still answer (200 or 503).
            let answered = (try? await client.status()) != nil
            #expect(answered, "geoattrd stopped answering; log: \(daemon.log.text)", sourceLocation: sourceLocation)
        }
        let cacheProblem = CacheFileIntegrity.problem(at: daemon.cacheFile)
        #expect(cacheProblem == nil, "\(cacheProblem ?? "")", sourceLocation: sourceLocation)
        let pid = daemon.process.pid
        var current = ProcessResources.of(pid)
        let settled = await eventually(timeout: settle, interval: .milliseconds(100)) {
            current = ProcessResources.of(pid)
            return current?.holdsNoMore(than: baseline, threadSlack: threadSlack) ?? false
        }
        #expect(
            settled,
            "resources grew: before \(baseline), after \(current.map(\.description) ?? "gone"); new descriptors: \(Self.added(from: baseline, to: current))",
            sourceLocation: sourceLocation)
    }

    /// Stops the daemon: a clean exit (0) within the grace period is part of every scenario.
    func stop(sourceLocation: SourceLocation = #_sourceLocation) async {
        let status = await daemon.stop()
        #expect(status == 0, "geoattrd did not exit cleanly (\(status.map(String.init) ?? "killed")); log: \(daemon.log.text)", sourceLocation: sourceLocation)
        let cacheProblem = CacheFileIntegrity.problem(at: daemon.cacheFile)
        #expect(cacheProblem == nil, "\(cacheProblem ?? "")", sourceLocation: sourceLocation)
    }

    private static func added(from baseline: ProcessResources, to current: ProcessResources?) -> [String] {
        guard let current else { return [] }
        var remaining = baseline.descriptors
        return current.descriptors.filter { descriptor in
            if let index = remaining.firstIndex(of: descriptor) {
                remaining.remove(at: index)
                return false
            }
            return true
        }
    }
}

/// Configuration fragments the scenarios combine.
enum FaultConfig {
    /// gpsd at `endpoint`, a short TTL and retry so the scenarios run in seconds. `positions`:
    /// log at debug level, where each accepted fix's position is logged ("fix position").
    static func gpsd(_ endpoint: String, ttl: Int = 2, timeout: Int = 10, positions: Bool = false) -> String {
        (positions ? "log:\n  level: debug\n" : "") + """
        gpsd:
          endpoint: "\(endpoint)"
        fix:
          timeout_s: \(timeout)
          no_satellite_timeout_s: \(timeout)
        schedule:
          ttl_s: \(ttl)
          retry_initial_s: 1
          retry_max_s: 2

        """
    }

    static let staticLocation = "gpsd:\n  enabled: false\nstatic:\n  latitude: 47.3769\n  longitude: 8.5417\n  error_m: 25\n"
}
