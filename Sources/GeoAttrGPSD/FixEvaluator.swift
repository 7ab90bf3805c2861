import GeoAttrCore
import GeoAttrModel
import GeoAttrSettings

/// Decides, report by report, when a one-shot attempt has an acceptable fix.
///
/// Pure state: it reads the reports and the monotonic clock values they carry, so the rules are
/// tested without gpsd. The traps it handles were each measured on gpsd 3.22:
/// - `status` reads 0 for an ordinary fix: decisions use `mode` and the fields present.
/// - The first report after a mode change carries the previous mode's error estimate (gpsd's
///   "no DOP" placeholder on the first 2D report; the 2D value on the first 3D one). Such a
///   report is accepted only if its estimate is fresh: present, not a placeholder, and
///   different from the one the previous report carried. Otherwise the next report decides; a
///   report is never deferred twice in a row, so a receiver flapping between modes still fixes.
/// - gpsd opens the receiver when the first client watches, and its first report for an epoch
///   is often built from the RMC sentence alone (2D, no altitude, no estimate); the full report
///   for the same epoch follows within a second. So the session's first report with a position,
///   and any acceptable report without an estimate from a receiver not known never to send one,
///   waits for one more report, at most `firstReportWait`; then the better of the two is kept
///   (3D over 2D, an estimate over none, a smaller estimate over a larger one).
/// - Receivers that never send an error estimate: accepted with the error unknown (switchable),
///   without the wait once two reports in a row have shown it (remembered per device path).
/// - Reports without time: the position is usable; the arrival time stands in (`systemClock`).
/// - Receiver dates off by 1024-week GPS eras are moved back to the system clock's era; a date
///   that still cannot be right (before 2024, or over a year ahead of a sane system clock) is
///   not used: the position is, dated like a report without time.
struct FixEvaluator {
    enum Step: Equatable {
        case wait
        case accept(Fix)
        case fail(FixError)
    }

    /// What a receiver has shown about error estimates.
    enum EstimateHistory: Sendable, Hashable {
        case sendsEstimates
        case neverSendsEstimates
    }

    /// An acceptable report waiting for the next one.
    private struct Candidate {
        var report: GPSDReport.PositionReport
        var error: Double?
        var deadline: Int64
    }

    let rules: FixAcceptanceRules
    let startNanoseconds: Int64
    private(set) var positionReports = 0
    /// What is known of each receiver (by device path) about estimates: given at the start,
    /// and what this session learned.
    private(set) var receivers: [String: EstimateHistory]
    private var previous: GPSDReport.PositionReport?
    private var deferredPrevious = false
    private var sawPositionBefore = false
    private var candidate: Candidate?
    private var fallback: (report: GPSDReport.PositionReport, error: Double)?
    private var bestError: Double?
    private var sawSignal = false
    private var noSignalSince: Int64?

    init(rules: FixAcceptanceRules, startNanoseconds: Int64, receivers: [String: EstimateHistory] = [:]) {
        self.rules = rules
        self.startNanoseconds = startNanoseconds
        self.receivers = receivers
    }

    var deadlineNanoseconds: Int64 { startNanoseconds + rules.timeout.nanosecondsValue }

    /// Whether an acceptable report waits for the next one.
    var isHoldingAReport: Bool { candidate != nil }

    /// The earliest moment at which `check(now:)` may end the attempt.
    var nextDecisionNanoseconds: Int64 {
        var next = deadlineNanoseconds
        if let noSignalSince { next = min(next, noSignalSince + rules.noSatelliteTimeout.nanosecondsValue) }
        if let candidate { next = min(next, candidate.deadline) }
        return next
    }

    mutating func consume(_ report: GPSDReport) -> Step {
        switch report {
        case .position(let position):
            positionReports += 1
            defer { previous = position }
            return evaluate(position)
        case .sky(let sky):
            if sky.satellitesWithSignal > 0 {
                sawSignal = true
                noSignalSince = nil
            } else if noSignalSince == nil {
                // Until a signal shows up, the whole attempt counts as time without one.
                noSignalSince = sawSignal ? sky.receivedNanoseconds : startNanoseconds
            }
            return check(now: sky.receivedNanoseconds)
        case .devices, .other:
            return .wait
        }
    }

    /// Ends the attempt when a deadline has passed: a waiting report's, the no-satellite
    /// give-up, or the timeout (with the best fix within the looser bound, if any).
    func check(now: Int64) -> Step {
        if let candidate, now >= candidate.deadline || now >= deadlineNanoseconds {
            return .accept(makeFix(candidate.report, error: candidate.error))
        }
        if let noSignalSince, now - noSignalSince >= rules.noSatelliteTimeout.nanosecondsValue {
            return .fail(.noSatellites(seconds: Double(now - noSignalSince) / 1e9))
        }
        guard now >= deadlineNanoseconds else { return .wait }
        if let fallback {
            return .accept(makeFix(fallback.report, error: fallback.error, isFallback: true))
        }
        let timeout = rules.timeout.secondsValue
        if positionReports == 0 {
            return .fail(.timeout(timeoutSeconds: timeout))
        }
        return .fail(.noFix(timeoutSeconds: timeout, reports: positionReports, bestErrorMeters: bestError))
    }

    /// What the attempt has when gpsd closes the connection: a report waiting for the next one,
    /// else the best one within the looser bound; `nil` when neither.
    func bestWhenClosed() -> Fix? {
        if let candidate { return makeFix(candidate.report, error: candidate.error) }
        if let fallback { return makeFix(fallback.report, error: fallback.error, isFallback: true) }
        return nil
    }

    private mutating func evaluate(_ report: GPSDReport.PositionReport) -> Step {
        let previousWasDeferred = deferredPrevious
        deferredPrevious = false
        // The session's first report with a position: the first that may be RMC alone.
        let sawPosition = sawPositionBefore
        if report.mode >= 2, report.latitude != nil { sawPositionBefore = true }
        guard report.mode >= rules.minimumMode.rawValue,
            let latitude = report.latitude, let longitude = report.longitude,
            PositionValidity.isPlausible(latitude: latitude, longitude: longitude),
            !rules.requireTime || Self.receiverTime(of: report) != nil
        else { return nextReportEndsTheWait(now: report.receivedNanoseconds) }

        let error = report.horizontalError
        if error != nil { receivers[report.device] = .sendsEstimates }
        let modeChanged = previous.map { $0.mode != report.mode } ?? false
        let carriedOver = error != nil && error == previous?.horizontalError
        if candidate == nil, modeChanged, error == nil || carriedOver, !previousWasDeferred {
            deferredPrevious = true
            return check(now: report.receivedNanoseconds)
        }

        if let error {
            bestError = min(bestError ?? error, error)
            guard error <= rules.maximumErrorMeters else {
                if error <= rules.timeoutFallbackErrorMeters, error < (fallback?.error ?? .infinity) {
                    fallback = (report, error)
                }
                return nextReportEndsTheWait(now: report.receivedNanoseconds)
            }
        } else if !rules.acceptUnknownError {
            return nextReportEndsTheWait(now: report.receivedNanoseconds)
        }

        // Acceptable. With a report already waiting, this is the one it waited for.
        if let waiting = candidate {
            candidate = nil
            // Evidence of a receiver without estimates: no error field at all, twice (a placeholder
            // says the receiver has no DOP yet, not that it never sends one).
            if waiting.report.hasNoErrorFields, report.hasNoErrorFields, receivers[report.device] == nil {
                receivers[report.device] = .neverSendsEstimates
            }
            let best = Self.isBetter(report, error, than: waiting.report, waiting.error) ? (report, error) : (waiting.report, waiting.error)
            return .accept(makeFix(best.0, error: best.1))
        }
        let history = receivers[report.device]
        let waits = rules.firstReportWait > .zero && history != .neverSendsEstimates && (!sawPosition || error == nil)
        guard waits else { return .accept(makeFix(report, error: error)) }
        candidate = Candidate(report: report, error: error, deadline: report.receivedNanoseconds + rules.firstReportWait.nanosecondsValue)
        return check(now: report.receivedNanoseconds)
    }

    /// A report that is not an acceptable fix still ends a wait: the waiting report is the best
    /// the next report brought.
    private mutating func nextReportEndsTheWait(now: Int64) -> Step {
        guard let waiting = candidate else { return check(now: now) }
        candidate = nil
        return .accept(makeFix(waiting.report, error: waiting.error))
    }

    /// 3D over 2D, an estimate over none, a smaller estimate over a larger one, an altitude over
    /// none; on a tie, the newer report. (gpsd reports an epoch it has from RMC alone as 3D
    /// without altitude once it has seen the receiver's 3D fixes, with the last estimate.)
    static func isBetter(
        _ report: GPSDReport.PositionReport, _ error: Double?, than other: GPSDReport.PositionReport, _ otherError: Double?
    ) -> Bool {
        let dimensions = min(report.mode, 3), otherDimensions = min(other.mode, 3)
        if dimensions != otherDimensions { return dimensions > otherDimensions }
        switch (error, otherError) {
        case (nil, .some): return false
        case (.some, nil): return true
        case (let mine?, let theirs?) where mine != theirs: return mine < theirs
        default:
            let altitude = report.altitudeMSL ?? report.altitudeHAE, otherAltitude = other.altitudeMSL ?? other.altitudeHAE
            return altitude != nil || otherAltitude == nil
        }
    }

    /// The receiver's time of `report`, moved by whole GPS eras when that far from the system
    /// clock; `nil` when the report carries none, or one that cannot be right.
    static func receiverTime(of report: GPSDReport.PositionReport) -> (time: UTCTimestamp, source: FixTimeSource)? {
        guard let seconds = report.timeSeconds else { return nil }
        let received = UTCTimestamp(nanosecondsSinceEpoch: report.receivedRealtimeNanoseconds)
        let raw = UTCTimestamp(seconds: seconds, nanoseconds: report.timeNanoseconds)
        let corrected = WeekRollover.correct(raw, systemClock: received)
        guard WeekRollover.isPlausible(corrected, systemClock: received) else { return nil }
        return (corrected, corrected == raw ? .receiver : .receiverRolloverCorrected)
    }

    private func makeFix(_ report: GPSDReport.PositionReport, error: Double?, isFallback: Bool = false) -> Fix {
        let received = UTCTimestamp(nanosecondsSinceEpoch: report.receivedRealtimeNanoseconds)
        let time = Self.receiverTime(of: report)
        let altitude = report.mode >= 3 ? (report.altitudeMSL ?? report.altitudeHAE) : nil
        var fix = Fix(
            latitude: report.latitude ?? .nan,
            longitude: report.longitude ?? .nan,
            altitudeMeters: altitude,
            mode: report.mode >= 3 ? .threeDimensional : .twoDimensional,
            horizontalErrorMeters: error,
            receiverTime: time?.time,
            timeSource: time?.source ?? .systemClock,
            receivedAt: received,
            timeToFixMilliseconds: Double(report.receivedNanoseconds - startNanoseconds) / 1e6,
            origin: .gps,
            refusedReceiverTime: time == nil ? report.timeSeconds.map { UTCTimestamp(seconds: $0, nanoseconds: report.timeNanoseconds) } : nil,
            acceptedAsFallback: isFallback ? true : nil
        )
        fix.receiverDevice = report.device
        return fix
    }
}
