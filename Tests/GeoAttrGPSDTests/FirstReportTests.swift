import Foundation
import GeoAttrCore
@testable import GeoAttrGPSD
import GeoAttrModel
import Testing
import TestSupport
import GeoAttrSettings

/// What real receivers do at the start of a session and at its end, against a real gpsd fed by
/// gpsfake: the first report built from RMC alone, receivers that never send an estimate, gpsd
/// closing the connection, and estimates too large to be anything but estimates.
@Suite("First reports and fallbacks against gpsfake")
struct FirstReportTests {
    static let place = (latitude: 46.2044, longitude: 6.1432)

    func source(
        _ gpsfake: GPSFake, log: RecordedLog, receivers: ReceiverMemory = ReceiverMemory(),
        configure: (inout FixAcceptanceRules) -> Void = { _ in }
    ) -> GPSDFixSource {
        var rules = FixAcceptanceRules()
        rules.timeout = .seconds(30)
        configure(&rules)
        return GPSDFixSource(endpoint: GPSDEndpoint(host: "127.0.0.1", port: gpsfake.port), rules: rules, logger: log.logger, receivers: receivers)
    }

    func attempt(_ source: GPSDFixSource) async -> Result<Fix, FixError> {
        do {
            return .success(try await source.fix())
        } catch {
            return .failure(error)
        }
    }

    /// The position reports the source read (its trace lines), in order.
    func positionReports(_ log: RecordedLog) -> [(mode: Int, errorMeters: Double?, hasAltitude: Bool)] {
        log.lines.filter { $0.message == "TPV" }.map {
            (Int($0.metadata["mode"] ?? "") ?? 0, $0.metadata["eph"].flatMap(Double.init), $0.metadata["alt"].flatMap(Double.init) != nil)
        }
    }

    func held(_ log: RecordedLog) -> Int { log.lines.filter { $0.message.contains("holding the report for the next one") }.count }

    @Test("an RMC-only report before the full epoch (GGA, GSA, GST): 3D with the estimate, whichever comes first")
    func rmcOnlyFirstReportGivesWayToTheFullOne() async throws {
        // Epochs alternate: RMC alone and the full epoch. gpsd reports an RMC-only epoch as 2D
        // without an estimate when it has just opened the receiver, and as 3D without altitude
        // (with the last estimate) once it has seen 3D fixes. Whichever an attempt sees first,
        // the other comes next, and the full one must win; four attempts meet both orders.
        let full = NMEATrack.Epoch(latitude: Self.place.latitude, longitude: Self.place.longitude, mode: 3).with {
            $0.gst = (latitude: 1.8, longitude: 1.6)
        }
        let rmcOnly = full.with {
            $0.gga = false
            $0.gsa = false
            $0.gsv = false
        }
        let epochs = (0..<200).map { $0 % 2 == 0 ? rmcOnly : full }
        try await GPSFake.run(nmea: NMEATrack(epochs: epochs).render(), cycle: 0.05) { gpsfake in
            var sawRMCOnly = false
            var attempts: [[(mode: Int, errorMeters: Double?, hasAltitude: Bool)]] = []
            for _ in 0..<4 {
                let log = RecordedLog()
                let fix = try await source(gpsfake, log: log).fix()
                let reports = positionReports(log)
                attempts.append(reports)
                if reports.contains(where: { $0.mode == 2 || !$0.hasAltitude }) { sawRMCOnly = true }
                #expect(fix.mode == .threeDimensional, "reports \(reports.prefix(4))")
                // HDOP 1.2 x 19 m, gpsd's estimate.
                #expect(abs((fix.horizontalErrorMeters ?? 0) - 22.8) < 0.01, "error \(String(describing: fix.horizontalErrorMeters)); reports \(reports.prefix(4))")
                #expect(fix.altitudeMeters == 50)
                #expect(abs(fix.latitude - Self.place.latitude) < 1e-6)
            }
            #expect(sawRMCOnly, "no attempt saw an RMC-only report: the track did not test the case: \(attempts)")
        }
    }

    @Test("a receiver that never reports an estimate: unknown, and not waited on once it has been seen")
    func receiverWithoutEstimatesIsNotWaitedOnAgain() async throws {
        // RMC alone: no GGA or GSA, hence no DOP from which gpsd would derive an estimate.
        let epoch = NMEATrack.Epoch(latitude: Self.place.latitude, longitude: Self.place.longitude, mode: 2, hdop: nil).with {
            $0.gga = false
            $0.gsa = false
            $0.gsv = false
        }
        try await GPSFake.run(nmea: NMEATrack(epochs: NMEATrack.repeating(epoch, 60)).render(), cycle: 0.1, once: false) { gpsfake in
            let memory = ReceiverMemory()
            let firstLog = RecordedLog()
            let first = try await source(gpsfake, log: firstLog, receivers: memory).fix()
            #expect(first.horizontalErrorMeters == nil)
            #expect(first.mode == .twoDimensional)
            #expect(held(firstLog) == 1, "the first attempt did not wait once: \(held(firstLog))")
            #expect(memory.snapshot.values.contains(.neverSendsEstimates), "nothing learned: \(memory.snapshot)")
            // The next attempt takes the first report: nothing to wait for from this receiver.
            for _ in 0..<2 {
                let log = RecordedLog()
                let next = try await source(gpsfake, log: log, receivers: memory).fix()
                #expect(next.horizontalErrorMeters == nil)
                #expect(held(log) == 0, "waited again for a receiver known to send no estimate")
            }
        }
    }

    @Test("gpsd closes the connection after a fallback-eligible report: the fallback, marked as one")
    func fallbackKeptWhenGPSDCloses() async throws {
        let coarse = NMEATrack.Epoch(latitude: Self.place.latitude, longitude: Self.place.longitude, mode: 3, hdop: 15)  // 285 m
        try await GPSFake.run(nmea: NMEATrack(epochs: NMEATrack.repeating(coarse, 200)).render(), cycle: 0.05) { gpsfake in
            let log = RecordedLog()
            let started = ContinuousClock.now
            let fixing = Task { await attempt(source(gpsfake, log: log) { $0.timeout = .seconds(100 * TestTiming.scale) }) }
            // Once the source has seen a coarse report, gpsd goes away.
            let seen = await eventually(timeout: .seconds(20), interval: .milliseconds(20)) {
                positionReports(log).contains { $0.mode == 3 && ($0.errorMeters ?? 0) > 100 }
            }
            try #require(seen, "the source saw no coarse report: \(positionReports(log))")
            await gpsfake.stop()
            let result = await fixing.value
            guard case .success(let fix) = result else {
                Issue.record("expected the fallback, got \(result); reports \(positionReports(log))")
                return
            }
            #expect(fix.acceptedAsFallback == true)
            let error = try #require(fix.horizontalErrorMeters)
            #expect(error > 100 && error <= 500)
            #expect(ContinuousClock.now - started < .seconds(30 * TestTiming.scale), "it ran to the timeout instead of ending with the connection")
        }
    }

    @Test("a 5 km estimate from the DOP is an estimate: refused, not taken as unknown (gpsd 3.22; 3.25 drops that DOP)")
    func fiveKilometreEstimateIsRefused() async throws {
        let vague = NMEATrack.Epoch(latitude: Self.place.latitude, longitude: Self.place.longitude, mode: 3, hdop: 263.2)  // 5000.8 m
        try await GPSFake.run(nmea: NMEATrack(epochs: NMEATrack.repeating(vague, 60)).render(), cycle: 0.05) { gpsfake in
            let log = RecordedLog()
            let result = await attempt(source(gpsfake, log: log) { $0.timeout = .seconds(3) })
            if gpsfake.gpsdIsAtLeast(3, 25) {
                // gpsd 3.25 ignores an NMEA DOP of 99 or more (as it does the 99.99 that means none):
                // its reports carry no estimate until it has computed a DOP of its own from the
                // satellites in view (HDOP 1.53 for this track's GSV: 29.098 m). The fix carries
                // that estimate, or none when two reports without one came first.
                let reports = positionReports(log)
                guard case .success(let fix) = result else {
                    Issue.record("gpsd \(gpsfake.gpsdRelease): expected a fix, got \(result); reports \(reports.prefix(5))")
                    return
                }
                #expect(!reports.isEmpty && reports.allSatisfy { $0.errorMeters.map { abs($0 - 29.098) < 0.001 } ?? true }, "reports \(reports.prefix(5))")
                #expect(fix.horizontalErrorMeters.map { abs($0 - 29.098) < 0.001 } ?? true, "error \(String(describing: fix.horizontalErrorMeters))")
                return
            }
            guard case .failure(.noFix(_, let reports, let best)) = result else {
                Issue.record("expected no fix, got \(result); reports \(positionReports(log).prefix(5))")
                return
            }
            #expect(reports > 0)
            #expect((best ?? 0) > 4_900, "best error \(String(describing: best))")
        }
    }

    @Test("a receiver's own 5 km estimate (SiRF EPE): refused, not taken as unknown, by gpsd 3.22 and 3.25 alike")
    func receiversOwnFiveKilometreEstimateIsRefused() async throws {
        // $PSRFEPE's horizontal error reaches the report as eph unchanged, whatever the DOP (an
        // ordinary 1.2 here): through gpsd 3.25 the way an NMEA receiver's estimate can exceed
        // 99 x 19 m.
        let vague = NMEATrack.Epoch(latitude: Self.place.latitude, longitude: Self.place.longitude, mode: 3).with {
            $0.epe = (horizontal: 5000.8, vertical: 6500)
        }
        try await GPSFake.run(nmea: NMEATrack(epochs: NMEATrack.repeating(vague, 60)).render(), cycle: 0.05) { gpsfake in
            let log = RecordedLog()
            let result = await attempt(source(gpsfake, log: log) { $0.timeout = .seconds(3) })
            let seen = positionReports(log)
            guard case .failure(.noFix(_, let reports, let best)) = result else {
                Issue.record("gpsd \(gpsfake.gpsdRelease): expected no fix, got \(result); reports \(seen.prefix(5))")
                return
            }
            #expect(reports > 0)
            #expect(seen.allSatisfy { $0.errorMeters == 5000.8 }, "gpsd \(gpsfake.gpsdRelease): reports \(seen.prefix(5))")
            #expect(best == 5000.8, "best error \(String(describing: best))")
        }
    }
}
