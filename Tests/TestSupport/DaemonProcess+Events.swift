import Foundation
import GeoAttrClient
import GeoAttrLinux
import GeoAttrModel

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A wait on the daemon that ran out of time, with what it last saw: thrown, so that the test
/// fails saying what the daemon did instead.
public struct DaemonWaitTimeout: Error, CustomStringConvertible {
    public var description: String

    init(waitingFor expected: String, lastSeen: String, log: String) {
        description = "waited in vain for \(expected); last seen: \(lastSeen)\ndaemon log (end):\n\(log.suffix(4000))"
    }
}

/// The daemon's answer to a reload, from its reload record (what `geoattrctl reload` reads).
public struct ReloadAnswer: Sendable, Equatable {
    public var applied: Bool
    /// Why the configuration was refused; empty when applied.
    public var reason: String
    /// Keys that changed and wait for a restart.
    public var restartPending: [String]

    public init(applied: Bool, reason: String = "", restartPending: [String] = []) {
        self.applied = applied
        self.reason = reason
        self.restartPending = restartPending
    }
}

/// Waits on what the daemon does, as its clients see it: the status over the socket, the cache
/// file, the reload record. A log line says the same, in wording that may change; these do not.
extension DaemonProcess {
    /// A client of this daemon that gives up on one request soon: a wait asks again.
    public var client: GeoAttrClient { GeoAttrClient(socketPath: socketPath, timeout: .seconds(5 * TestTiming.scale)) }

    /// The status the daemon serves now; `nil` while its socket does not answer.
    public func status() async -> StatusDocument? {
        try? await client.statusDocument()
    }

    /// Waits until the status satisfies `condition` and returns it.
    @discardableResult
    public func waitForStatus(
        _ expected: String, timeout: Duration = .seconds(20 * TestTiming.scale), where condition: (StatusDocument) -> Bool
    ) async throws -> StatusDocument {
        var last: StatusDocument?
        var found: StatusDocument?
        _ = await eventually(timeout: timeout, interval: .milliseconds(20)) {
            guard let status = await status() else { return false }
            last = status
            found = condition(status) ? status : nil
            return found != nil
        }
        if let found { return found }
        throw DaemonWaitTimeout(
            waitingFor: expected, lastSeen: last.map { String(decoding: APIJSON.encode($0), as: UTF8.self) } ?? "no answer on \(socketPath)",
            log: log.text)
    }

    /// Waits until a result is served whose generation is above `generation` (any result, for
    /// `nil`): a fix was accepted, or the static location published. Every new result has a new
    /// generation, even at the same position.
    @discardableResult
    public func waitForGeneration(
        above generation: UInt64? = nil, timeout: Duration = .seconds(20 * TestTiming.scale)
    ) async throws -> StatusDocument {
        try await waitForStatus("a result of generation above \(generation.map(String.init) ?? "none")", timeout: timeout) { status in
            guard let served = status.generation else { return false }
            return generation.map { served > $0 } ?? true
        }
    }

    /// Waits until the daemon reports `state` (`foreground` or `background`).
    @discardableResult
    public func waitForState(_ state: PowerState, timeout: Duration = .seconds(20 * TestTiming.scale)) async throws -> StatusDocument {
        try await waitForStatus("state \(state.rawValue)", timeout: timeout) { $0.state == state.rawValue }
    }

    /// Waits until the last attempt is a failure that ended at `since` or later (any failure,
    /// for `nil`) and returns the status: its `last_attempt.error` is what the log's line says.
    @discardableResult
    public func waitForFailedAttempt(
        endedSince since: UTCTimestamp? = nil, timeout: Duration = .seconds(20 * TestTiming.scale)
    ) async throws -> StatusDocument {
        let expected = "a failed attempt" + (since.map { " ending at \($0.iso8601) or later" } ?? "")
        return try await waitForStatus(expected, timeout: timeout) { status in
            guard let attempt = status.lastAttempt, attempt.result != "fix" else { return false }
            guard let since else { return true }
            // The status gives times to the millisecond: `since` is compared at that resolution,
            // or an attempt ending in the same millisecond would read as earlier.
            guard let sinceToTheMillisecond = UTCTimestamp(iso8601: since.iso8601) else { return false }
            return UTCTimestamp(iso8601: attempt.endedAt).map { !($0 < sinceToTheMillisecond) } ?? false
        }
    }

    /// Waits until a refresh accepted after `count` ones is counted: the fix it takes has started.
    @discardableResult
    public func waitForRefreshAccepted(after count: Int, timeout: Duration = .seconds(20 * TestTiming.scale)) async throws -> StatusDocument {
        try await waitForStatus("more than \(count) refreshes accepted", timeout: timeout) { $0.refreshesAccepted > count }
    }

    /// Waits until the daemon's log has ended (it and whatever holds its output exited): every
    /// line it wrote has arrived, so what the log lacks it never said.
    public func waitForLogEnd(timeout: Duration = .seconds(10 * TestTiming.scale)) async throws {
        let ended = await eventually(timeout: timeout) { log.hasEnded }
        guard ended else {
            throw DaemonWaitTimeout(
                waitingFor: "the end of the log", lastSeen: process.isRunning ? "the daemon still running" : "the log still open", log: log.text)
        }
    }

    /// The result in the cache file, as the daemon last wrote it; `nil` while there is none or
    /// it cannot be read. Only reads: the daemon's own loader would set a damaged file aside.
    public func cachedResult() -> LocationResult? {
        Self.cachedResult(in: stateDirectory)
    }

    /// The result in the cache file of the state directory `directory`, of a daemon stopped or not.
    public static func cachedResult(in directory: String) -> LocationResult? {
        struct Envelope: Decodable { var result: LocationResult }
        guard let data = FileManager.default.contents(atPath: "\(directory)/\(CacheFile.fileName)") else { return nil }
        return try? JSONDecoder().decode(Envelope.self, from: data).result
    }

    /// Waits until the cache file holds a result of generation `generation` or later.
    @discardableResult
    public func waitForCacheGeneration(
        atLeast generation: UInt64, timeout: Duration = .seconds(20 * TestTiming.scale)
    ) async throws -> LocationResult {
        var found: LocationResult?
        _ = await eventually(timeout: timeout) {
            found = cachedResult().flatMap { $0.generation >= generation ? $0 : nil }
            return found != nil
        }
        if let found { return found }
        throw DaemonWaitTimeout(
            waitingFor: "generation \(generation) in \(cacheFile)",
            lastSeen: cachedResult().map { "generation \($0.generation)" } ?? "no readable cache file", log: log.text)
    }

    /// Waits until a result is served and the cache file holds it or a later one.
    @discardableResult
    public func waitForCachedResult(timeout: Duration = .seconds(20 * TestTiming.scale)) async throws -> LocationResult {
        let served = try await waitForGeneration(timeout: timeout)
        return try await waitForCacheGeneration(atLeast: served.generation ?? .max, timeout: timeout)
    }

    /// Waits until the daemon has trapped SIGUSR1, SIGHUP, SIGTSTP and SIGCONT: it names itself in
    /// its reload record only then. Before, any of them would end or stop it.
    public func waitUntilSignalsAreTrapped(timeout: Duration = .seconds(20 * TestTiming.scale)) async throws {
        let pid = process.pid
        _ = try await waitForReloadRecord("the reload record naming process \(pid)", timeout: timeout) { $0.pid == pid }
    }

    /// Sends SIGHUP and waits for the daemon's answer, as `geoattrctl reload` does.
    public func reload(timeout: Duration = .seconds(20 * TestTiming.scale)) async throws -> ReloadAnswer {
        try await waitUntilSignalsAreTrapped(timeout: timeout)
        let pid = process.pid
        let sent = ReloadRecord.now()
        signal(SIGHUP)
        let record = try await waitForReloadRecord("an answer to the reload sent at \(sent)", timeout: timeout) {
            $0.pid == pid && $0.outcome != .started && $0.startedNanoseconds >= sent
        }
        return ReloadAnswer(applied: record.outcome == .applied, reason: record.reason, restartPending: record.restartPending)
    }

    private func waitForReloadRecord(
        _ expected: String, timeout: Duration, where condition: (ReloadRecord) -> Bool
    ) async throws -> ReloadRecord {
        var found: ReloadRecord?
        _ = await eventually(timeout: timeout) {
            found = (try? ReloadRecord.read(in: stateDirectory)).flatMap { condition($0) ? $0 : nil }
            return found != nil
        }
        if let found { return found }
        let last = try? ReloadRecord.read(in: stateDirectory)
        throw DaemonWaitTimeout(waitingFor: expected, lastSeen: last?.text ?? "no reload record", log: log.text)
    }
}
