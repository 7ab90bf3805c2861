import CGPS
import GeoAttrCore
import GeoAttrModel
import Testing

@testable import GeoAttrGPSD
import GeoAttrSettings

/// The acceptance rules, report by report, without gpsd.
@Suite("FixEvaluator")
struct FixEvaluatorTests {
    static let second: Int64 = 1_000_000_000
    static let now2026: Int64 = 1_795_000_000 * second

    static func tpv(
        at seconds: Double, mode: Int = 3, latitude: Double? = 48.85, longitude: Double? = 2.29,
        eph: Double? = 20, time: Int64? = 1_795_000_000, device: String = "/dev/ttyACM0"
    ) -> GPSDReport {
        .position(
            GPSDReport.PositionReport(
                mode: mode, latitude: latitude, longitude: longitude, altitudeMSL: mode >= 3 ? 35 : nil, altitudeHAE: mode >= 3 ? 80 : nil,
                eph: eph, epx: nil, epy: nil, timeSeconds: time,
                receivedNanoseconds: Int64(seconds * 1e9),
                receivedRealtimeNanoseconds: now2026 + Int64(seconds * 1e9), device: device))
    }

    static func sky(at seconds: Double, withSignal: Int) -> GPSDReport {
        .sky(GPSDReport.SkyReport(satellitesVisible: 6, satellitesUsed: 0, satellitesWithSignal: withSignal, receivedNanoseconds: Int64(seconds * 1e9)))
    }

    /// Without the first-report wait unless `configure` sets one: most rules are about single
    /// reports; the wait has tests of its own below.
    func evaluator(
        receivers: [String: FixEvaluator.EstimateHistory] = [:], _ configure: (inout FixAcceptanceRules) -> Void = { _ in }
    ) -> FixEvaluator {
        var rules = FixAcceptanceRules()
        rules.timeout = .seconds(30)
        rules.firstReportWait = .zero
        configure(&rules)
        return FixEvaluator(rules: rules, startNanoseconds: 0, receivers: receivers)
    }

    func waiting(receivers: [String: FixEvaluator.EstimateHistory] = [:]) -> FixEvaluator {
        evaluator(receivers: receivers) { $0.firstReportWait = .seconds(1) }
    }

    func acceptedFix(_ step: FixEvaluator.Step) -> Fix? {
        if case .accept(let fix) = step { return fix }
        return nil
    }

    @Test func acceptsAGoodFirstReport() throws {
        var evaluator = evaluator()
        let fix = try #require(acceptedFix(evaluator.consume(Self.tpv(at: 1.5))))
        #expect(fix.latitude == 48.85 && fix.longitude == 2.29)
        #expect(fix.mode == .threeDimensional)
        #expect(fix.altitudeMeters == 35)
        #expect(fix.horizontalErrorMeters == 20)
        #expect(fix.timeToFixMilliseconds == 1500)
        #expect(fix.receiverTime?.seconds == 1_795_000_000)
        #expect(fix.timeSource == .receiver)
    }

    @Test func statusIsIgnoredAndNoFixModeIsNotAccepted() {
        var evaluator = evaluator()
        #expect(evaluator.consume(Self.tpv(at: 1, mode: 1, latitude: nil, longitude: nil, eph: nil)) == .wait)
        #expect(evaluator.consume(Self.tpv(at: 2, mode: 0, latitude: nil, longitude: nil, eph: nil)) == .wait)
    }

    @Test("the first 2D report after no fix carries the 1899.81 m placeholder: wait for the next")
    func staleEstimateAfterNoFix() throws {
        var evaluator = evaluator()
        _ = evaluator.consume(Self.tpv(at: 1, mode: 1, latitude: nil, longitude: nil, eph: nil))
        #expect(evaluator.consume(Self.tpv(at: 2, mode: 2, eph: 1899.81)) == .wait)
        let fix = try #require(acceptedFix(evaluator.consume(Self.tpv(at: 3, mode: 2, eph: 17.1))))
        #expect(fix.horizontalErrorMeters == 17.1)
    }

    @Test("a mode change that carries the previous estimate over is not accepted at once")
    func carriedOverEstimateAfterModeChange() throws {
        var evaluator = evaluator { $0.minimumMode = .threeDimensional }
        _ = evaluator.consume(Self.tpv(at: 1, mode: 2, eph: 57))
        #expect(evaluator.consume(Self.tpv(at: 2, mode: 3, eph: 57)) == .wait)
        let fix = try #require(acceptedFix(evaluator.consume(Self.tpv(at: 3, mode: 3, eph: 17.1))))
        #expect(fix.horizontalErrorMeters == 17.1)
    }

    @Test("a fresh estimate after a mode change is accepted at once")
    func freshEstimateAfterModeChange() throws {
        var evaluator = evaluator()
        _ = evaluator.consume(Self.tpv(at: 1, mode: 1, latitude: nil, longitude: nil, eph: nil))
        let fix = try #require(acceptedFix(evaluator.consume(Self.tpv(at: 2, mode: 2, eph: 22.8))))
        #expect(fix.mode == .twoDimensional)
        #expect(fix.altitudeMeters == nil)
    }

    @Test("a receiver flapping between modes with one estimate is never starved")
    func flappingReceiverStillFixes() throws {
        var evaluator = evaluator()
        _ = evaluator.consume(Self.tpv(at: 1, mode: 2, eph: 300))
        #expect(evaluator.consume(Self.tpv(at: 2, mode: 3, eph: 300)) == .wait)
        #expect(evaluator.consume(Self.tpv(at: 3, mode: 2, eph: 22.8)) != .wait)
    }

    @Test func errorAboveBoundWaitsThenTimeoutReturnsBestWithinLooserBound() throws {
        var evaluator = evaluator()
        #expect(evaluator.consume(Self.tpv(at: 1, latitude: 10, eph: 400)) == .wait)
        #expect(evaluator.consume(Self.tpv(at: 2, latitude: 11, eph: 250)) == .wait)
        #expect(evaluator.consume(Self.tpv(at: 3, latitude: 12, eph: 700)) == .wait)
        #expect(evaluator.check(now: 29 * Self.second) == .wait)
        let fix = try #require(acceptedFix(evaluator.check(now: 30 * Self.second)))
        #expect(fix.latitude == 11)
        #expect(fix.horizontalErrorMeters == 250)
    }

    @Test func timeoutWithoutAcceptableFixIsNoFix() {
        var evaluator = evaluator()
        _ = evaluator.consume(Self.tpv(at: 1, eph: 900))
        #expect(evaluator.check(now: 30 * Self.second) == .fail(.noFix(timeoutSeconds: 30, reports: 1, bestErrorMeters: 900)))
    }

    @Test func timeoutWithoutAnyReportIsTimeout() {
        let evaluator = evaluator()
        #expect(evaluator.check(now: 31 * Self.second) == .fail(.timeout(timeoutSeconds: 30)))
    }

    @Test func epxAndEpyStandInForEph() throws {
        var evaluator = evaluator()
        let report = GPSDReport.position(
            GPSDReport.PositionReport(
                mode: 3, latitude: 1, longitude: 1, eph: nil, epx: 30, epy: 40, timeSeconds: nil,
                receivedNanoseconds: Self.second, receivedRealtimeNanoseconds: Self.now2026))
        let fix = try #require(acceptedFix(evaluator.consume(report)))
        #expect(fix.horizontalErrorMeters == 50)
        #expect(fix.timeSource == .systemClock)
        #expect(fix.receiverTime == nil)
    }

    @Test func unknownErrorIsAcceptedOrRefusedAsConfigured() {
        var accepting = evaluator()
        #expect(acceptedFix(accepting.consume(Self.tpv(at: 1, eph: nil)))?.horizontalErrorMeters == nil)
        #expect(acceptedFix(accepting.consume(Self.tpv(at: 1, eph: nil))) != nil)
        var refusing = evaluator { $0.acceptUnknownError = false }
        #expect(refusing.consume(Self.tpv(at: 1, eph: nil)) == .wait)
    }

    @Test func timeRequiredWaitsForTime() {
        var evaluator = evaluator { $0.requireTime = true }
        #expect(evaluator.consume(Self.tpv(at: 1, time: nil)) == .wait)
        #expect(acceptedFix(evaluator.consume(Self.tpv(at: 2))) != nil)
    }

    @Test("implausible positions are never accepted", arguments: [
        (0.0, 0.0), (Double.nan, 2.0), (48.0, Double.infinity), (91.0, 2.0), (-90.5, 2.0), (45.0, 180.5), (45.0, -181.0),
    ])
    func implausiblePositions(latitude: Double, longitude: Double) {
        var evaluator = evaluator()
        #expect(evaluator.consume(Self.tpv(at: 1, latitude: latitude, longitude: longitude)) == .wait)
    }

    @Test func noSatelliteSignalGivesUpEarly() {
        var evaluator = evaluator { $0.noSatelliteTimeout = .seconds(20) }
        #expect(evaluator.consume(Self.sky(at: 1, withSignal: 0)) == .wait)
        #expect(evaluator.nextDecisionNanoseconds == 20 * Self.second)
        #expect(evaluator.consume(Self.sky(at: 19, withSignal: 0)) == .wait)
        #expect(evaluator.check(now: 20 * Self.second) == .fail(.noSatellites(seconds: 20)))
    }

    @Test func aSatelliteSignalResetsTheNoSatelliteClock() {
        var evaluator = evaluator {
            $0.noSatelliteTimeout = .seconds(20)
            $0.timeout = .seconds(120)
        }
        _ = evaluator.consume(Self.sky(at: 1, withSignal: 0))
        _ = evaluator.consume(Self.sky(at: 10, withSignal: 2))
        #expect(evaluator.check(now: 21 * Self.second) == .wait)
        _ = evaluator.consume(Self.sky(at: 22, withSignal: 0))
        #expect(evaluator.check(now: 41 * Self.second) == .wait)
        #expect(evaluator.check(now: 42 * Self.second) == .fail(.noSatellites(seconds: 20)))
    }

    @Test("a fix dated 1024 weeks back is moved to the system clock's era")
    func weekRolloverIsCorrected() throws {
        var evaluator = evaluator()
        let rolledBack = 1_795_000_000 - WeekRollover.eraSeconds
        let fix = try #require(acceptedFix(evaluator.consume(Self.tpv(at: 1, time: rolledBack))))
        #expect(fix.receiverTime?.seconds == 1_795_000_000)
        #expect(fix.timeSource == .receiverRolloverCorrected)
    }

    @Test func weekRolloverLeavesOrdinaryOffsetsAlone() {
        let clock = UTCTimestamp(seconds: 1_795_000_000)
        for offset: Int64 in [0, 3600, -86_400 * 30, 86_400 * 365] {
            let time = UTCTimestamp(seconds: 1_795_000_000 + offset)
            #expect(WeekRollover.correct(time, systemClock: clock) == time)
        }
        let forward = UTCTimestamp(seconds: 1_795_000_000 + WeekRollover.eraSeconds + 5)
        #expect(WeekRollover.correct(forward, systemClock: clock) == UTCTimestamp(seconds: 1_795_000_005))
        // An unsynchronised system clock (no RTC) cannot judge.
        let early = UTCTimestamp(seconds: 100)
        #expect(WeekRollover.correct(forward, systemClock: early) == forward)
    }

    @Test("a receiver time that cannot be right (2019 as gpsd makes of 1999, 2040) is not used; the position is", arguments: [
        Int64(1_562_500_821),  // 2019-07-07, gpsd 3.22's reading of a receiver's 1999-11-21
        Int64(2_236_939_200),  // 2040-11-19
    ])
    func implausibleReceiverTimeIsNotUsed(time: Int64) throws {
        var evaluator = evaluator()
        let fix = try #require(acceptedFix(evaluator.consume(Self.tpv(at: 1, time: time))))
        #expect(fix.latitude == 48.85)
        #expect(fix.receiverTime == nil)
        #expect(fix.timeSource == .systemClock)
        #expect(fix.time == fix.receivedAt)
        // Kept for the operator (the log, `geoattrctl doctor`), never used.
        #expect(fix.refusedReceiverTime == UTCTimestamp(seconds: time))
        // Required time: such a report counts as one without time.
        var strict = self.evaluator { $0.requireTime = true }
        #expect(strict.consume(Self.tpv(at: 1, time: time)) == .wait)
    }

    @Test func plausibleReceiverTimes() {
        let clock = UTCTimestamp(seconds: 1_795_000_000)
        for offset: Int64 in [0, -86_400 * 600, 86_400 * 365] {
            #expect(WeekRollover.isPlausible(UTCTimestamp(seconds: 1_795_000_000 + offset), systemClock: clock))
        }
        #expect(!WeekRollover.isPlausible(UTCTimestamp(seconds: 1_795_000_000 + 86_400 * 367), systemClock: clock))
        #expect(!WeekRollover.isPlausible(UTCTimestamp(seconds: WeekRollover.saneClockSeconds - 1), systemClock: clock))
        // A system clock before 2024 cannot judge.
        #expect(WeekRollover.isPlausible(UTCTimestamp(seconds: 100), systemClock: UTCTimestamp(seconds: 200)))
    }

    // MARK: The first report of a session

    @Test("an RMC-only first report waits, and the full report of the same epoch wins")
    func firstReportWaitsForTheFullOne() throws {
        var evaluator = waiting()
        #expect(evaluator.consume(Self.tpv(at: 1.0, mode: 2, eph: nil)) == .wait)
        let fix = try #require(acceptedFix(evaluator.consume(Self.tpv(at: 1.2, mode: 3, eph: 12))))
        #expect(fix.mode == .threeDimensional)
        #expect(fix.horizontalErrorMeters == 12)
        #expect(fix.altitudeMeters == 35)
        #expect(fix.timeToFixMilliseconds == 1200)
        #expect(evaluator.receivers["/dev/ttyACM0"] == .sendsEstimates)
    }

    @Test("after no-fix reports, the first report with a position waits too: the 3D one after it wins")
    func firstPositionAfterNoFixWaits() throws {
        var evaluator = waiting()
        _ = evaluator.consume(Self.tpv(at: 0.5, mode: 1, latitude: nil, longitude: nil, eph: nil))
        #expect(evaluator.consume(Self.tpv(at: 1.0, mode: 2, eph: 54.72)) == .wait)
        let fix = try #require(acceptedFix(evaluator.consume(Self.tpv(at: 2.0, mode: 3, eph: 54.72))))
        #expect(fix.mode == .threeDimensional)
        // Later reports with an estimate do not wait.
        #expect(acceptedFix(evaluator.consume(Self.tpv(at: 3.0, mode: 3, eph: 30))) != nil)
    }

    @Test("the wait is bounded by time: with no next report the first one is taken")
    func firstReportWaitIsBoundedByTime() throws {
        var evaluator = waiting()
        #expect(evaluator.consume(Self.tpv(at: 1.0, mode: 2, eph: nil)) == .wait)
        #expect(evaluator.nextDecisionNanoseconds == 2 * Self.second)
        #expect(evaluator.check(now: 1_900_000_000) == .wait)
        let fix = try #require(acceptedFix(evaluator.check(now: 2 * Self.second)))
        #expect(fix.mode == .twoDimensional)
        #expect(fix.horizontalErrorMeters == nil)
    }

    @Test("the wait is bounded by one report: a worse or unusable next report keeps the first")
    func firstReportWaitIsBoundedByOneReport() throws {
        var worse = waiting()
        #expect(worse.consume(Self.tpv(at: 1.0, latitude: 10, eph: 20)) == .wait)
        let kept = try #require(acceptedFix(worse.consume(Self.tpv(at: 1.5, latitude: 11, eph: 60))))
        #expect(kept.latitude == 10)
        var unusable = waiting()
        #expect(unusable.consume(Self.tpv(at: 1.0, latitude: 10, eph: 20)) == .wait)
        let first = try #require(acceptedFix(unusable.consume(Self.tpv(at: 1.5, mode: 1, latitude: nil, longitude: nil, eph: nil))))
        #expect(first.latitude == 10)
    }

    @Test("the better of two: 3D over 2D, an estimate over none, the smaller estimate")
    func betterReport() {
        func report(mode: Int, eph: Double?) -> (GPSDReport.PositionReport, Double?) {
            guard case .position(let position) = Self.tpv(at: 1, mode: mode, eph: eph) else { return (Self.emptyReport, nil) }
            return (position, position.horizontalError)
        }
        let d3 = report(mode: 3, eph: 80), d2 = report(mode: 2, eph: 5), none3 = report(mode: 3, eph: nil), small3 = report(mode: 3, eph: 4)
        #expect(FixEvaluator.isBetter(d3.0, d3.1, than: d2.0, d2.1))
        #expect(FixEvaluator.isBetter(d3.0, d3.1, than: none3.0, none3.1))
        #expect(!FixEvaluator.isBetter(none3.0, none3.1, than: d3.0, d3.1))
        #expect(FixEvaluator.isBetter(small3.0, small3.1, than: d3.0, d3.1))
    }

    static let emptyReport = GPSDReport.PositionReport(
        mode: 0, eph: nil, epx: nil, epy: nil, timeSeconds: nil, receivedNanoseconds: 0, receivedRealtimeNanoseconds: 0)

    @Test("a receiver that never sends an estimate is learned, and then not waited on")
    func receiverWithoutEstimatesIsLearned() throws {
        var first = waiting()
        #expect(first.consume(Self.tpv(at: 1.0, mode: 2, eph: nil)) == .wait)
        #expect(acceptedFix(first.consume(Self.tpv(at: 2.0, mode: 2, eph: nil))) != nil)
        #expect(first.receivers["/dev/ttyACM0"] == .neverSendsEstimates)
        // The next attempt (the daemon's memory, or later reports in the same connection).
        var next = waiting(receivers: first.receivers)
        let fix = try #require(acceptedFix(next.consume(Self.tpv(at: 1.0, mode: 2, eph: nil))))
        #expect(fix.horizontalErrorMeters == nil)
        // Another device behind the same gpsd is not assumed to be the same.
        var other = waiting(receivers: first.receivers)
        #expect(other.consume(Self.tpv(at: 1.0, mode: 2, eph: nil, device: "/dev/ttyUSB1")) == .wait)
    }

    @Test("placeholders in a row are no evidence of a receiver without estimates")
    func placeholdersDoNotMarkAReceiver() throws {
        var evaluator = waiting()
        #expect(evaluator.consume(Self.tpv(at: 1.0, mode: 2, eph: 1899.81)) == .wait)
        #expect(acceptedFix(evaluator.consume(Self.tpv(at: 2.0, mode: 2, eph: 1899.81))) != nil)
        #expect(evaluator.receivers["/dev/ttyACM0"] == nil)
    }

    @Test("a receiver that sends estimates still waits on its first report of a session")
    func firstReportOfAnEstimatingReceiverWaits() {
        var evaluator = waiting(receivers: ["/dev/ttyACM0": .sendsEstimates])
        #expect(evaluator.consume(Self.tpv(at: 1.0, eph: 20)) == .wait)
        #expect(acceptedFix(evaluator.consume(Self.tpv(at: 2.0, eph: 15)))?.horizontalErrorMeters == 15)
    }

    // MARK: Estimates and placeholders

    @Test("only gpsd's exact no-DOP placeholders mean no estimate", arguments: [1899.81, 474.9525, 1899.8099999])
    func placeholdersMeanNoEstimate(eph: Double) throws {
        var evaluator = evaluator()
        let fix = try #require(acceptedFix(evaluator.consume(Self.tpv(at: 1, eph: eph))))
        #expect(fix.horizontalErrorMeters == nil)
    }

    @Test("any other estimate is judged, however large: a 5 km estimate is refused", arguments: [5000.0, 1899.0, 1900.0, 2500.0])
    func largeEstimatesAreJudged(eph: Double) {
        var evaluator = evaluator()
        #expect(evaluator.consume(Self.tpv(at: 1, eph: eph)) == .wait)
        #expect(evaluator.check(now: 30 * Self.second) == .fail(.noFix(timeoutSeconds: 30, reports: 1, bestErrorMeters: eph)))
    }

    @Test func epxEpyPlaceholdersMeanNoEstimate() throws {
        var evaluator = evaluator()
        let report = GPSDReport.position(
            GPSDReport.PositionReport(
                mode: 3, latitude: 1, longitude: 1, eph: nil, epx: 1499.85, epy: 1499.85, timeSeconds: nil,
                receivedNanoseconds: Self.second, receivedRealtimeNanoseconds: Self.now2026))
        #expect(try #require(acceptedFix(evaluator.consume(report))).horizontalErrorMeters == nil)
    }

    // MARK: Fallbacks

    @Test("a fallback taken at the timeout says so")
    func timeoutFallbackIsMarked() throws {
        var evaluator = evaluator()
        #expect(evaluator.consume(Self.tpv(at: 1, eph: 300)) == .wait)
        let fix = try #require(acceptedFix(evaluator.check(now: 30 * Self.second)))
        #expect(fix.acceptedAsFallback == true)
    }

    @Test("when gpsd closes the connection, a fallback or a waiting report is kept")
    func bestWhenClosed() throws {
        var fallback = evaluator()
        #expect(fallback.bestWhenClosed() == nil)
        _ = fallback.consume(Self.tpv(at: 1, eph: 300))
        let kept = try #require(fallback.bestWhenClosed())
        #expect(kept.horizontalErrorMeters == 300)
        #expect(kept.acceptedAsFallback == true)
        var pending = waiting()
        _ = pending.consume(Self.tpv(at: 1, eph: 20))
        let waitingFix = try #require(pending.bestWhenClosed())
        #expect(waitingFix.acceptedAsFallback == nil)
        var refused = evaluator()
        _ = refused.consume(Self.tpv(at: 1, eph: 900))
        #expect(refused.bestWhenClosed() == nil)
    }
}

@Suite("CGPS shim")
struct ShimTests {
    @Test func compiledAgainstASupportedLibgps() {
        #expect(CGPS_api_major >= 9)
        #expect(MemoryLayout<CGPS_fix>.size == 112)
        #expect(MemoryLayout<CGPS_sky>.size == 16)
    }

    @Test func errorTextsAreReadable() {
        #expect(GPSDSession.text(111).contains("refused"))
        #expect(!GPSDSession.text(-1).isEmpty)
    }

    @Test func endpointsParse() {
        #expect(GPSDEndpoint(parsing: "127.0.0.1:2947") == GPSDEndpoint(host: "127.0.0.1", port: 2947))
        #expect(GPSDEndpoint(parsing: "gpsbox") == GPSDEndpoint(host: "gpsbox", port: 2947))
        #expect(GPSDEndpoint(parsing: "[::1]:3000") == GPSDEndpoint(host: "::1", port: 3000))
        #expect(GPSDEndpoint(parsing: "[::1]:3000")?.description == "[::1]:3000")
        #expect(GPSDEndpoint(parsing: "::1") == GPSDEndpoint(host: "::1", port: 2947))
        for bad in ["", "host:", ":2947", "host:0", "host:70000", "host:abc", "[::1", "[]:1"] {
            #expect(GPSDEndpoint(parsing: bad) == nil, "\(bad) should not parse")
        }
    }
}
