import GeoPlaces
import Foundation
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

/// gpsd and the receiver misbehaving, against the release build: gpsd absent, killed, restarted;
/// a receiver that loses its fix, sends garbage, reports Null Island, positions out of range or
/// NaN, or a date decades off. Each scenario checks the fault reached the daemon (gpsd's own
/// debug log says what it sent the daemon's connection), what the daemon did about it, and the
/// fault suite's promises afterwards.
@Suite("fault: gpsd and receiver", .serialized)
struct GPSDFaultTests {
    @Test("gpsd absent at start: retried with capped backoff, and a fix once gpsd appears")
    func gpsdAbsentAtStart() async throws {
        let port = try Loopback.freePort()
        var fault = try await FaultDaemon.start(
            config: FaultConfig.gpsd("127.0.0.1:\(port)", ttl: 3600), waitForResult: false)
        let daemon = fault.daemon
        let retried = await eventually(timeout: .seconds(30)) { daemon.count("gpsd is unreachable") >= 4 }
        try #require(retried, "no repeated attempts: \(daemon.log.text)")
        #expect(await fault.served() == nil, "something was served without a fix")
        let status = await fault.status()
        #expect(status?["gpsd_reachable"] as? Bool == false, "status: \(status ?? [:])")
        // Backoff (retry_initial_s 1, retry_max_s 2, a random upper half): never hammering, never
        // longer than the cap.
        let attempts = daemon.log.all.filter { $0.text.contains("taking a fix") }
        let gaps = zip(attempts, attempts.dropFirst()).map { secondsBetween($0, $1) }
        #expect(gaps.allSatisfy { $0 >= 0.45 }, "attempts closer than the backoff allows: \(gaps)")
        #expect(gaps.allSatisfy { $0 <= 4.0 }, "attempts further apart than the 2 s cap: \(gaps)")

        let track = FaultTrack.steady()
        try await GPSFake.run(nmea: track.nmea, once: false, gpsdDebugLevel: 4, port: port) { gpsfake in
            let served = await eventually(timeout: .seconds(20)) { await fault.served() != nil }
            try #require(served, "no fix once gpsd came up: \(daemon.log.text)")
            let document = await fault.served()
            #expect(FaultTrack.isNear(document, FaultTrack.amsterdam), "\(String(describing: document))")
            #expect(document?.source == "gps")
            #expect(gpsfake.daemonConnections.count >= 1)
            #expect(await fault.status()?["gpsd_reachable"] as? Bool == true)
            await fault.rememberServed()
            await fault.expectSurvived()
            await fault.stop()
        }
    }

    @Test("gpsd killed (SIGKILL) while the daemon's connection waits for a fix: the fix fails, the old result stays, and gpsd coming back is used")
    func gpsdKilledMidFix() async throws {
        // A fix for the first 5 s (the last good result), then no fix: a forced fix waits.
        let track = FaultTrack.render([
            .repeating(FaultTrack.fix(at: FaultTrack.amsterdam), 20),
            .repeating(NMEATrack.noFix(satellitesInView: 6, withSignal: 3), 800),
        ])
        let gpsfake = try await GPSFake(nmea: track.nmea, once: false, gpsdDebugLevel: 4)
        let port = gpsfake.port
        var fault = try await FaultDaemon.start(config: FaultConfig.gpsd(gpsfake.endpoint, ttl: 3600, timeout: 30))
        let daemon = fault.daemon
        #expect(FaultTrack.isNear(fault.lastGood, FaultTrack.amsterdam))
        _ = try #require(
            await gpsfake.log.waitForLine(timeout: .seconds(20)) { $0.contains(track.marker(ofPhase: 1)) },
            "no \(track.marker(ofPhase: 1)) in gpsd's log: \(gpsfake.log.text.suffix(3000))")
        let client = try await fault.forceFix(on: gpsfake)
        // The daemon is connected and waiting: a report without a fix went to it.
        let waiting = await eventually(timeout: .seconds(10)) {
            gpsfake.reportsSent(to: client).contains { $0.contains("\"mode\":1") }
        }
        #expect(waiting, "gpsd sent the daemon no report: \(gpsfake.log.text.suffix(2000))")
        let killed = UTCTimestamp.now()
        gpsfake.process.signalGroup(SIGKILL)
        #expect(await gpsfake.process.waitAsync(timeout: .seconds(10)) != nil, "gpsfake survived SIGKILL")
        let failed = try await daemon.waitForFailedAttempt(endedSince: killed, timeout: .seconds(15))
        let reason = failed.lastAttempt?.error ?? ""
        #expect(reason.contains("lost the connection to gpsd"), "\(reason)")
        #expect(FaultTrack.isNear(await fault.served(), FaultTrack.amsterdam), "the last good result was not kept")
        await fault.expectSurvived()

        // gpsd comes back on the same port: the next forced fix uses it.
        let back = FaultTrack.steady(at: FaultTrack.paris, startingSecondsFromNow: 1_800)
        try await GPSFake.run(nmea: back.nmea, once: false, gpsdDebugLevel: 4, port: port) { gpsfake in
            _ = try await fault.forceFix(on: gpsfake)
            let moved = await eventually(timeout: .seconds(20)) { FaultTrack.isNear(await fault.served(), FaultTrack.paris) }
            #expect(moved, "no fix from the restarted gpsd: \(daemon.log.text)")
            await fault.rememberServed()
            await fault.expectSurvived()
            await fault.stop()
        }
        await gpsfake.stop()
    }

    @Test("gpsd restarted between fixes (a new gpsd on the same port): the next scheduled fix comes from it")
    func gpsdRestartedBetweenFixes() async throws {
        let first = FaultTrack.steady(at: FaultTrack.amsterdam)
        let gpsfake = try await GPSFake(nmea: first.nmea, once: false, gpsdDebugLevel: 4)
        let port = gpsfake.port
        var fault = try await FaultDaemon.start(config: FaultConfig.gpsd(gpsfake.endpoint, ttl: 1, timeout: 10))
        let daemon = fault.daemon
        // At least one scheduled fix after the first.
        let cadence = await eventually(timeout: .seconds(20)) { gpsfake.daemonConnections.count >= 2 }
        #expect(cadence, "no scheduled fix from the first gpsd")
        await gpsfake.stop()
        let stoppedAt = daemon.log.all.count
        // The restarted receiver: moved, and its clock moved on.
        let second = FaultTrack.steady(at: FaultTrack.paris, startingSecondsFromNow: 1_800)
        try await GPSFake.run(nmea: second.nmea, once: false, gpsdDebugLevel: 4, port: port) { restarted in
            let moved = await eventually(timeout: .seconds(30)) { FaultTrack.isNear(await fault.served(), FaultTrack.paris) }
            #expect(moved, "no fix from the restarted gpsd: \(daemon.log.text.suffix(3000))")
            #expect(restarted.daemonConnections.count >= 1)
            // And the schedule goes on with it.
            let more = await eventually(timeout: .seconds(20)) { restarted.daemonConnections.count >= 3 }
            #expect(more, "the schedule stopped after the restart")
            let failures = daemon.log.all.dropFirst(stoppedAt).filter { $0.text.contains("fix failed") }
            #expect(failures.allSatisfy { $0.text.contains("gpsd") }, "\(failures.map(\.text))")
            await fault.rememberServed()
            await fault.expectSurvived()
            await fault.stop()
        }
    }

    @Test("receiver drops from 3D to no fix and back: the old result is served (stale) meanwhile, the new fix replaces it")
    func receiverLosesFixAndRecovers() async throws {
        let track = FaultTrack.render([
            .repeating(FaultTrack.fix(at: FaultTrack.amsterdam), 20),
            .repeating(NMEATrack.noFix(satellitesInView: 6, withSignal: 0), 40),
            .repeating(FaultTrack.fix(at: FaultTrack.paris), 1_000),
        ])
        try await GPSFake.run(nmea: track.nmea, once: false, gpsdDebugLevel: 4) { gpsfake in
            // TTL 1 s, attempts give up after 3 s: attempts fail during the 10 s without a fix.
            var fault = try await FaultDaemon.start(config: FaultConfig.gpsd(gpsfake.endpoint, ttl: 1, timeout: 3, positions: true))
            let daemon = fault.daemon
            #expect(FaultTrack.isNear(fault.lastGood, FaultTrack.amsterdam))
            let lost = try await daemon.waitForFailedAttempt(timeout: .seconds(30)).lastAttempt?.error ?? ""
            #expect(lost.contains("no acceptable fix") || lost.contains("no report") || lost.contains("no satellite"), "\(lost)")
            // While there is no fix: the last good result, flagged stale (older than the TTL).
            let during = await fault.served()
            #expect(FaultTrack.isNear(during, FaultTrack.amsterdam), "\(String(describing: during))")
            #expect(during?.stale == true, "\(String(describing: during))")
            let back = await eventually(timeout: .seconds(30)) { FaultTrack.isNear(await fault.served(), FaultTrack.paris) }
            #expect(back, "no new fix after the receiver recovered: \(daemon.log.text.suffix(3000))")
            let after = await fault.served()
            #expect(after?.stale == false)
            #expect((after?.generation ?? 0) > (fault.lastGood?.generation ?? .max))
            // Only the two real positions were ever accepted.
            for line in fault.acceptedFixes() {
                #expect(line.text.contains("lat=52.3731") || line.text.contains("lat=48.8566"), "\(line.text)")
            }
            await fault.rememberServed()
            await fault.expectSurvived()
            await fault.stop()
        }
    }

    @Test("garbage, binary noise, truncated sentences and bad checksums between and instead of sentences: only real positions are served")
    func garbageAndTruncatedNMEA() async throws {
        // A sentence placing the receiver at the decoy, its checksum broken: gpsd must drop it.
        let decoyBody = "GPGGA,120000.00,1030.000000,N,02030.000000,E,1,08,1.2,50.0,M,47.0,M,,"
        let checksum = decoyBody.utf8.reduce(UInt8(0)) { $0 ^ $1 } ^ 0x55
        let badChecksum = "$\(decoyBody)*\(String(format: "%02X", checksum))\r\n"
        let noise = [
            "\u{0}\u{1}\u{7F}\u{FF}\u{B5}b\u{A0}\u{A2}garbage!!\r\n",
            "$GPGGA,1200",  // truncated, no line end: the next sentence follows at once
            "$GPRMC,120001.00,A,4851.3\r\n",  // truncated with a line end
            badChecksum,
            String(repeating: "Z", count: 300) + "\r\n",  // longer than any NMEA sentence
            "$$$$****\n\n\r\r",
        ].joined()
        let noisy = { (place: FaultTrack.GeoPlace) in FaultTrack.fix(at: place).with { $0.noiseBefore = noise } }
        var garbageOnly = NMEATrack.noFix()
        garbageOnly.gga = false
        garbageOnly.gsa = false
        garbageOnly.gsv = false
        garbageOnly.rmc = false
        garbageOnly.noiseBefore = noise + noise
        let track = FaultTrack.render([
            .repeating(noisy(FaultTrack.amsterdam), 20),
            .repeating(garbageOnly, 40),
            .repeating(noisy(FaultTrack.paris), 1_000),
        ])
        try await GPSFake.run(nmea: track.nmea, once: false, gpsdDebugLevel: 4) { gpsfake in
            var fault = try await FaultDaemon.start(config: FaultConfig.gpsd(gpsfake.endpoint, ttl: 1, timeout: 3, positions: true))
            let daemon = fault.daemon
            #expect(FaultTrack.isNear(fault.lastGood, FaultTrack.amsterdam), "\(String(describing: fault.lastGood))")
            // During the garbage, attempts fail and the last good result stays.
            let failed = try await daemon.waitForFailedAttempt(timeout: .seconds(30)).lastAttempt?.error ?? ""
            #expect(FaultTrack.isNear(await fault.served(), FaultTrack.amsterdam))
            let recovered = await eventually(timeout: .seconds(30)) { FaultTrack.isNear(await fault.served(), FaultTrack.paris) }
            #expect(recovered, "no fix after the garbage: \(daemon.log.text.suffix(3000))")
            let accepted = fault.acceptedFixes()
            #expect(accepted.count >= 2)
            for line in accepted {
                #expect(line.text.contains("lat=52.3731") || line.text.contains("lat=48.8566"), "\(line.text)")
            }
            #expect(!daemon.log.text.contains("lat=\(FaultTrack.decoy.latitude)"), "the bad-checksum decoy was accepted")
            #expect(failed.contains("no acceptable fix") || failed.contains("no report"), "\(failed)")
            await fault.rememberServed()
            await fault.expectSurvived()
            await fault.stop()
        }
    }

    /// The bad phases of the receiver-report scenarios, each between a good fix at Amsterdam
    /// (the last good result) and good fixes at Paris.
    enum BadReports: String, CaseIterable, CustomTestStringConvertible, Sendable {
        /// 3D fixes at exactly (0, 0): a receiver's default position.
        case nullIsland
        /// Latitude 95.5 N, longitude 195 E.
        case outOfRange
        /// "nan" in the position fields of GGA and RMC.
        case notANumber

        var testDescription: String { rawValue }

        var epochs: [NMEATrack.Epoch] {
            switch self {
            case .nullIsland:
                return NMEATrack.repeating(NMEATrack.Epoch(latitude: 0, longitude: 0, mode: 3), 24)
            case .outOfRange:
                return NMEATrack.repeating(NMEATrack.Epoch(latitude: 95.5, longitude: 195, mode: 3), 24)
            case .notANumber:
                return (0..<24).map { _ in
                    NMEATrack.Epoch(latitude: 1, longitude: 1, mode: 3).with {
                        $0.gga = false
                        $0.rmc = false
                    }
                }
            }
        }
    }

    @Test("receiver reports that are not positions (Null Island, out of range, NaN): never served; the next real fix is", arguments: BadReports.allCases)
    func implausiblePositions(bad: BadReports) async throws {
        var phases: [FaultTrack.Phase] = [
            .repeating(FaultTrack.fix(at: FaultTrack.amsterdam), 20),
            FaultTrack.Phase(bad.epochs),
            .repeating(FaultTrack.fix(at: FaultTrack.paris), 1_000),
        ]
        let firstEpoch = UTCTimestamp.now().seconds + 120
        var track = FaultTrack.render(phases, startingAt: firstEpoch)
        if bad == .notANumber {
            // GGA and RMC with "nan" where the position goes, at the bad phase's times.
            let start = track.phaseStarts[1]
            phases[1].epochs = phases[1].epochs.enumerated().map { index, epoch in
                let time = FaultTrack.timeOfDay(start + Int64(index))
                let civil = FaultTrack.civil(start + Int64(index))
                let date = String(format: "%02d%02d%02d", civil.day, civil.month, civil.year % 100)
                return epoch.with {
                    $0.noiseBefore = NMEATrack.sentence("GPGGA,\(time),nan,N,nan,E,1,08,1.2,50.0,M,47.0,M,,")
                        + NMEATrack.sentence("GPRMC,\(time),A,nan,N,nan,E,0.0,0.0,\(date),,,A")
                }
            }
            track = FaultTrack.render(phases, startingAt: firstEpoch)
        }
        let badMarker = bad == .notANumber ? "GPGGA,\(FaultTrack.timeOfDay(track.phaseStarts[1])),nan" : track.marker(ofPhase: 1)
        try await GPSFake.run(nmea: track.nmea, once: false, gpsdDebugLevel: 4) { gpsfake in
            var fault = try await FaultDaemon.start(config: FaultConfig.gpsd(gpsfake.endpoint, ttl: 3600, timeout: 30, positions: true))
            let daemon = fault.daemon
            #expect(FaultTrack.isNear(fault.lastGood, FaultTrack.amsterdam))
            _ = try #require(
                await gpsfake.log.waitForLine(timeout: .seconds(20)) { $0.contains(badMarker) }, "the bad phase never came: \(gpsfake.log.text.suffix(2000))")
            let servedBefore = try await daemon.waitForGeneration().generation
            let client = try await fault.forceFix(on: gpsfake)
            // What reached the daemon: 3D reports with the bad position, or none at all.
            let reached = await eventually(timeout: .seconds(10)) {
                gpsfake.reportsSent(to: client).contains { report in
                    switch bad {
                    case .nullIsland: report.contains("\"mode\":3") && report.contains("\"lat\":0.000000000,\"lon\":0.000000000")
                    case .outOfRange, .notANumber: report.contains("\"mode\":3") && !report.contains("\"lat\"")
                    }
                }
            }
            #expect(reached, "gpsd sent the daemon none of the bad reports: \(gpsfake.reportsSent(to: client).prefix(5))")
            // Meanwhile the last good result is served.
            #expect(FaultTrack.isNear(await fault.served(), FaultTrack.amsterdam))
            // The forced fix is the one result after it (the TTL is an hour): the good position.
            try await daemon.waitForGeneration(above: servedBefore, timeout: .seconds(30))
            let accepted = await fault.served()
            #expect(FaultTrack.isNear(accepted, FaultTrack.paris), "accepted \(String(describing: accepted))")
            for line in fault.acceptedFixes() {
                #expect(!line.text.contains("lat=0.0 ") && !line.text.contains("lat=95.5") && !line.text.contains("nan"), "\(line.text)")
            }
            await fault.rememberServed()
            await fault.expectSurvived()
            await fault.stop()
        }
    }

    @Test("receiver dated decades off (1999, which gpsd turns into 2019; 2040): the position is used, dated by the system clock", arguments: [1999, 2040])
    func wildlyWrongReceiverTime(year: Int) async throws {
        // Dated ten minutes back: the fix dated by the system clock comes after the last good one.
        let track = FaultTrack.render([
            .repeating(FaultTrack.fix(at: FaultTrack.amsterdam), 20),
            FaultTrack.Phase(NMEATrack.repeating(FaultTrack.fix(at: FaultTrack.paris), 1_000), year: year, zda: true),
        ], startingSecondsFromNow: -600)
        let reportedYear = year == 1999 ? "2019-" : "2040-"
        try await GPSFake.run(nmea: track.nmea, once: false, gpsdDebugLevel: 4) { gpsfake in
            var fault = try await FaultDaemon.start(config: FaultConfig.gpsd(gpsfake.endpoint, ttl: 3600, timeout: 30, positions: true))
            let daemon = fault.daemon
            #expect(FaultTrack.isNear(fault.lastGood, FaultTrack.amsterdam))
            _ = try #require(
                await gpsfake.log.waitForLine(timeout: .seconds(20)) { $0.contains("\"time\":\"\(reportedYear)") },
                "gpsd never reported the wrong year: \(gpsfake.log.text.suffix(2000))")
            let mark = daemon.log.all.count
            let servedBefore = try await daemon.waitForGeneration().generation
            let before = UTCTimestamp.now()
            let client = try await fault.forceFix(on: gpsfake)
            try await daemon.waitForGeneration(above: servedBefore, timeout: .seconds(30))
            let after = UTCTimestamp.now()
            // What reached the daemon: a good position with a time decades off.
            let reports = gpsfake.reportsSent(to: client)
            #expect(!reports.isEmpty && reports.allSatisfy { $0.contains("\"time\":\"\(reportedYear)") }, "\(reports.prefix(3))")
            let document = try #require(await fault.served())
            #expect(FaultTrack.isNear(document, FaultTrack.paris))
            // Dated by the system clock when the report arrived, not by the receiver.
            let fixTime = try #require(UTCTimestamp(iso8601: document.fixTime), "fix_time \(document.fixTime)")
            #expect(
                fixTime.seconds >= before.seconds - 1 && fixTime.seconds <= after.seconds + 1,
                "fix_time \(document.fixTime), between \(before.iso8601) and \(after.iso8601)")
            // The warning's wording is the point: the log is read for it.
            let warning = await daemon.waitForLog("receiver time", from: mark, timeout: .seconds(5))
            #expect(warning?.text.contains(reportedYear) == true, "no warning naming the receiver's time: \(daemon.log.text)")
            await fault.rememberServed()
            await fault.expectSurvived()
            await fault.stop()
        }
    }

}
