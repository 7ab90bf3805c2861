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

/// The daemon's inputs abused: the state file flapped a thousand times in a second, ten thousand
/// SIGUSR1 at once, SIGHUP storms with a valid and an invalid configuration, SIGTERM in the
/// middle of a fix. gpsd's debug log counts what reached the receiver.
@Suite("fault: signals and state", .serialized)
struct SignalFaultTests {
    @Test("state file replaced 1,000 times in a second, foreground and background alternating: the daemon ends in the last state, healthy, holding no more than before")
    func stateFileFlapping() async throws {
        try await GPSFake.run(nmea: FaultTrack.steady().nmea, once: false, gpsdDebugLevel: 4) { gpsfake in
            // TTL 1 s: back in the foreground, a fix is due at once; the flapping starts and
            // cancels attempts.
            var fault = try await FaultDaemon.start(config: FaultConfig.gpsd(gpsfake.endpoint, ttl: 1))
            let daemon = fault.daemon
            let before = gpsfake.daemonConnections.count
            let elapsed = try Self.flap(daemon, times: 1_000, last: "background")
            print("state file flapped 1,000 times in \(elapsed)")
            // As fast as the machine goes (0.7-1.2 s on 2 busy cores): a burst, not a trickle.
            #expect(elapsed < .seconds(5), "the flapping took \(elapsed): not the fault asked for")
            let settled = await eventually(timeout: .seconds(15)) {
                let status = await fault.status()
                return status?["state"] as? String == "background" && status?["fix_in_flight"] as? Bool == false
            }
            let status = await fault.status()
            #expect(settled, "not in the background after the flapping: \(String(describing: status))")
            let changes = daemon.log.all.filter { $0.text.contains("state changed") }
            #expect(changes.last?.text.contains("to=background") == true, "\(changes.last?.text ?? "no state change logged")")
            #expect(changes.count <= 1_000)
            // Absence over time: no gpsd connection during three TTLs in the background.
            let connections = gpsfake.daemonConnections.count
            let connected = await eventually(timeout: .seconds(3), interval: .milliseconds(100)) { gpsfake.daemonConnections.count > connections }
            let final = try #require(changes.last)
            // An attempt in flight at the last change may still reach gpsd as it is cancelled;
            // none may connect later (a cancelled attempt whose thread ran late used to).
            let late = gpsfake.daemonConnections.map { secondsBetween(final, $0) }.filter { $0 > 0.25 }
            #expect(!connected, "the daemon connected to gpsd in the background")
            #expect(late.isEmpty, "gpsd saw watch requests \(late) s after the daemon went to the background")
            print("flapping: \(changes.count) state changes logged, \(connections - before) gpsd connections")
            await fault.expectSurvived()

            // And the other way round: ending in the foreground, fixing again.
            let servedBefore = await daemon.status()?.generation
            _ = try Self.flap(daemon, times: 1_000, last: "foreground")
            try await daemon.waitForGeneration(above: servedBefore)
            #expect(await fault.status()?["state"] as? String == "foreground")
            await fault.rememberServed()
            await fault.expectSurvived()
            await fault.stop()
        }
    }

    /// Replaces the state file by rename `times` times, alternating, ending with `last`; how
    /// long it took. Plain system calls: the fault is the rate.
    static func flap(_ daemon: DaemonProcess, times: Int, last: String) throws -> Duration {
        let other = last == "background" ? "foreground" : "background"
        let temporary = daemon.directory.file("state-file.flap")
        let started = ContinuousClock.now
        for index in 0..<times {
            let content = Array(((times - 1 - index) % 2 == 0 ? last : other).utf8) + [10]
            let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            guard fd >= 0 else { throw FaultInjectionError(description: "open \(temporary): errno \(errno)") }
            let written = content.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            close(fd)
            guard written == content.count, rename(temporary, daemon.stateFile) == 0 else {
                throw FaultInjectionError(description: "replacing the state file failed: errno \(errno)")
            }
        }
        return ContinuousClock.now - started
    }

    @Test("10,000 SIGUSR1 in a burst: gpsd sees at most refresh.burst fixes; every other request joins a fix or is refused")
    func sigusr1Burst() async throws {
        try await GPSFake.run(nmea: FaultTrack.steady().nmea, once: false, gpsdDebugLevel: 4) { gpsfake in
            let burst = 3
            var fault = try await FaultDaemon.start(
                config: FaultConfig.gpsd(gpsfake.endpoint, ttl: 3600) + "refresh:\n  burst: \(burst)\n  interval_s: 3600\n")
            let daemon = fault.daemon
            let before = gpsfake.daemonConnections.count
            let pid = daemon.process.pid
            let started = ContinuousClock.now
            for _ in 0..<10_000 { kill(pid, SIGUSR1) }
            print("10,000 SIGUSR1 sent in \(ContinuousClock.now - started)")
            let decided = await eventually(timeout: .seconds(10)) { daemon.count("refresh accepted") > 0 }
            #expect(decided, "no refresh decision after the burst: \(daemon.log.text.suffix(1000))")
            // The kernel merges pending signals: if the burst did not spend the budget, single
            // requests do, each one after the previous decision.
            var extra = 0
            while daemon.count("refresh refused") == 0, extra < 2 * burst + 2 {
                try await Self.waitUntilIdle(fault)
                let decisions = Self.refreshDecisions(daemon)
                daemon.signal(SIGUSR1)
                extra += 1
                _ = await eventually(timeout: .seconds(10)) { Self.refreshDecisions(daemon) > decisions }
            }
            try await Self.waitUntilIdle(fault)
            let accepted = daemon.count("refresh accepted")
            let refused = daemon.count("refresh refused")
            let joined = daemon.count("joins the fix in flight")
            let fixes = gpsfake.daemonConnections.count - before
            print("SIGUSR1 burst: \(accepted) accepted, \(joined) joined, \(refused) refused (\(extra) sent singly after); gpsd saw \(fixes) fixes")
            #expect(refused >= 1, "the budget was never exhausted: the test proves nothing")
            #expect(accepted <= burst, "\(accepted) forced fixes with refresh.burst \(burst)")
            #expect(fixes <= burst, "gpsd saw \(fixes) fixes for a budget of \(burst)")
            let status = await fault.status()
            #expect(status?["refreshes_accepted"] as? Int == accepted)
            #expect(status?["refresh_tokens"] as? Int == 0)
            await fault.rememberServed()
            await fault.expectSurvived()
            await fault.stop()
        }
    }

    static func refreshDecisions(_ daemon: DaemonProcess) -> Int {
        daemon.log.all.filter { $0.text.contains("refresh accepted") || $0.text.contains("refresh refused") || $0.text.contains("joins the fix in flight") }.count
    }

    /// Waits until no fix is in flight.
    static func waitUntilIdle(_ fault: FaultDaemon, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let idle = await eventually(timeout: .seconds(20), interval: .milliseconds(50)) {
            await fault.status()?["fix_in_flight"] as? Bool == false
        }
        try #require(idle, "a fix stayed in flight", sourceLocation: sourceLocation)
    }

    /// Sends `count` SIGHUPs, a few hundred microseconds apart so that most are not merged by
    /// the kernel, while a client keeps asking for the attributes; the client's answers.
    static func sighupStorm(_ fault: FaultDaemon, count: Int) async -> (ok: Int, failures: [String]) {
        let client = fault.client
        let pid = fault.daemon.process.pid
        let deadline = ContinuousClock.now + .seconds(4)
        async let answers: (Int, [String]) = {
            var ok = 0
            var failures: [String] = []
            while ContinuousClock.now < deadline {
                do {
                    _ = try await client.attributes()
                    ok += 1
                } catch {
                    failures.append("\(error)")
                }
            }
            return (ok, failures)
        }()
        for _ in 0..<count {
            kill(pid, SIGHUP)
            try? await Task.sleep(for: .microseconds(500))
        }
        let (ok, failures) = await answers
        return (ok, failures)
    }

    @Test("SIGHUP storm with a valid configuration while serving: every request answered, every reload applied, fixes go on")
    func sighupStormValidConfiguration() async throws {
        try await GPSFake.run(nmea: FaultTrack.steady().nmea, once: false, gpsdDebugLevel: 4) { gpsfake in
            var fault = try await FaultDaemon.start(config: FaultConfig.gpsd(gpsfake.endpoint, ttl: 1))
            let daemon = fault.daemon
            let storm = await Self.sighupStorm(fault, count: 500)
            // Let the last reloads finish.
            let quiet = await Self.waitForQuiet(daemon, "SIGHUP: reloading")
            #expect(quiet)
            let reloads = daemon.count("SIGHUP: reloading")
            let applied = daemon.count("configuration reloaded")
            print("SIGHUP storm (valid): \(reloads) reloads, \(applied) applied; client: \(storm.ok) answers, \(storm.failures.count) failures")
            #expect(storm.failures.isEmpty, "requests failed during the storm: \(storm.failures.prefix(3))")
            #expect(storm.ok > 0)
            #expect(reloads >= 10, "only \(reloads) reloads reached the daemon")
            #expect(applied == reloads, "\(reloads) reloads, \(applied) applied")
            #expect(daemon.count("reload refused") == 0)
            // The schedule goes on after the storm.
            try await daemon.waitForGeneration(above: await daemon.status()?.generation, timeout: .seconds(10))
            await fault.rememberServed()
            await fault.expectSurvived()
            await fault.stop()
        }
    }

    @Test("SIGHUP storm with an invalid configuration file: every reload refused, the running configuration kept")
    func sighupStormInvalidConfiguration() async throws {
        try await GPSFake.run(nmea: FaultTrack.steady().nmea, once: false, gpsdDebugLevel: 4) { gpsfake in
            let valid = FaultConfig.gpsd(gpsfake.endpoint, ttl: 1) + "refresh:\n  burst: 4\n  interval_s: 3600\n"
            var fault = try await FaultDaemon.start(config: valid)
            let daemon = fault.daemon
            #expect(await fault.status()?["refresh_tokens"] as? Int == 4)
            // Invalid as a whole: the valid refresh.burst in it must not be applied either.
            try "schedule:\n  ttl_s: -5\nrefresh:\n  burst: 1\n".write(toFile: daemon.configFile, atomically: true, encoding: .utf8)
            let storm = await Self.sighupStorm(fault, count: 300)
            let quiet = await Self.waitForQuiet(daemon, "SIGHUP: reloading")
            #expect(quiet)
            let reloads = daemon.count("SIGHUP: reloading")
            let refused = daemon.log.all.filter { $0.text.contains("reload refused") }
            print("SIGHUP storm (invalid): \(reloads) reloads, \(refused.count) refused; client: \(storm.ok) answers, \(storm.failures.count) failures")
            #expect(storm.failures.isEmpty, "requests failed during the storm: \(storm.failures.prefix(3))")
            #expect(reloads >= 10, "only \(reloads) reloads reached the daemon")
            #expect(refused.count == reloads)
            #expect(refused.allSatisfy { $0.text.contains("schedule.ttl_s") }, "\(refused.first?.text ?? "")")
            #expect(daemon.count("configuration reloaded") == 0)
            // The old configuration runs: burst 4, and fixes every second.
            #expect(await fault.status()?["refresh_tokens"] as? Int == 4)
            let first = try await daemon.waitForGeneration(above: await daemon.status()?.generation, timeout: .seconds(10))
            let firstSeen = ContinuousClock.now
            try await daemon.waitForGeneration(above: first.generation, timeout: .seconds(10))
            let between = ContinuousClock.now - firstSeen
            #expect(between < .seconds(3), "fixes no longer every second: \(between) between two")
            // A valid file again: applied.
            try (valid.replacingOccurrences(of: "burst: 4", with: "burst: 2")).write(toFile: daemon.configFile, atomically: true, encoding: .utf8)
            let reloaded = try await daemon.reload()
            #expect(reloaded.applied, "the valid file was refused: \(reloaded.reason)")
            let tokens = await eventually(timeout: .seconds(5)) { await fault.status()?["refresh_tokens"] as? Int == 2 }
            #expect(tokens)
            await fault.rememberServed()
            await fault.expectSurvived()
            await fault.stop()
        }
    }

    /// Waits until no new line containing `text` arrived for a second.
    static func waitForQuiet(_ daemon: DaemonProcess, _ text: String, timeout: Duration = .seconds(30)) async -> Bool {
        var count = daemon.count(text)
        var since = ContinuousClock.now
        return await eventually(timeout: timeout, interval: .milliseconds(100)) {
            let now = daemon.count(text)
            if now != count {
                count = now
                since = ContinuousClock.now
            }
            return ContinuousClock.now - since >= .seconds(1)
        }
    }

    @Test("SIGTERM while a fix waits on gpsd: exit 0 at once, gpsd released")
    func sigtermDuringFix() async throws {
        let track = FaultTrack.render([
            .repeating(FaultTrack.fix(at: FaultTrack.amsterdam), 20),
            .repeating(NMEATrack.noFix(satellitesInView: 6, withSignal: 3), 800),
        ])
        try await GPSFake.run(nmea: track.nmea, once: false, gpsdDebugLevel: 4) { gpsfake in
            let fault = try await FaultDaemon.start(config: FaultConfig.gpsd(gpsfake.endpoint, ttl: 3600, timeout: 30))
            let daemon = fault.daemon
            _ = try #require(await gpsfake.log.waitForLine(timeout: .seconds(20)) { $0.contains(track.marker(ofPhase: 1)) })
            let client = try await fault.forceFix(on: gpsfake)
            let waiting = await eventually(timeout: .seconds(10)) {
                gpsfake.reportsSent(to: client).contains { $0.contains("\"mode\":1") }
            }
            #expect(waiting, "the daemon's connection got no report")
            #expect(await fault.status()?["fix_in_flight"] as? Bool == true)
            let children = ProcessResources.childProcesses(of: daemon.process.pid)
            let started = ContinuousClock.now
            await fault.stop()
            let took = ContinuousClock.now - started
            #expect(took < .seconds(5), "SIGTERM took \(took) to end the daemon")
            // The log pipe is read on a thread of its own: the last lines may still be on their way.
            // That it cancelled the fix it had in flight, only the log says.
            try await daemon.waitForLogEnd()
            #expect(daemon.count("cancelling the fix in flight") > 0, "\(daemon.log.text.suffix(1500))")
            #expect(daemon.count("geoattrd stopped") > 0, "\(daemon.log.text.suffix(1500))")
            #expect(await gpsfake.waitForDisconnect(of: client, timeout: .seconds(5)) != nil, "gpsd never saw the daemon hang up")
            #expect(children.isEmpty, "the daemon had children: \(children)")
        }
    }
}
