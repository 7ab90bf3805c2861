import GeoAttrCore
import GeoAttrModel

/// Decides, report by report, when a one-shot attempt has an acceptable fix.
///
/// Pure state: it reads the reports and the monotonic clock values they carry, so the rules are
/// tested without gpsd. The traps it handles were each measured on gpsd 3.22:
/// - `status` reads 0 for an ordinary fix: decisions use `mode` and the fields present.
/// - The first report after a mode change carries the previous mode's error estimate (1899.8 m,
///   the no-fix HDOP 99.99 x 19, on the first 2D report; the 2D value on the first 3D one). Such
///   a report is accepted only if its estimate is fresh: present, not the no-DOP placeholder, and
///   different from the one the previous report carried. Otherwise the next report decides; a
///   report is never deferred twice in a row, so a receiver flapping between modes still fixes.
/// - Receivers that never send an error estimate: accepted with the error unknown (switchable).
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

    /// gpsd's placeholder eph when the DOP is unknown: HDOP 99.99 x 19 m.
    static let noDOPErrorMeters = 1899.0

    let rules: FixAcceptanceRules
    let startNanoseconds: Int64
    private(set) var positionReports = 0
    private var previous: GPSDReport.PositionReport?
    private var deferredPrevious = false
    private var fallback: (report: GPSDReport.PositionReport, error: Double)?
    private var bestError: Double?
    private var sawSignal = false
    private var noSignalSince: Int64?

    init(rules: FixAcceptanceRules, startNanoseconds: Int64) {
        self.rules = rules
        self.startNanoseconds = startNanoseconds
    }

    var deadlineNanoseconds: Int64 { startNanoseconds + rules.timeout.nanosecondsValue }

    /// The earliest moment at which `check(now:)` may end the attempt.
    var nextDecisionNanoseconds: Int64 {
        guard let noSignalSince else { return deadlineNanoseconds }
        return min(deadlineNanoseconds, noSignalSince + rules.noSatelliteTimeout.nanosecondsValue)
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

    /// Ends the attempt when a deadline has passed: the no-satellite give-up, or the timeout
    /// (with the best fix within the looser bound, if any).
    func check(now: Int64) -> Step {
        if let noSignalSince, now - noSignalSince >= rules.noSatelliteTimeout.nanosecondsValue {
            return .fail(.noSatellites(seconds: Double(now - noSignalSince) / 1e9))
        }
        guard now >= deadlineNanoseconds else { return .wait }
        if let fallback {
            return .accept(makeFix(fallback.report, error: fallback.error))
        }
        let timeout = rules.timeout.secondsValue
        if positionReports == 0 {
            return .fail(.timeout(timeoutSeconds: timeout))
        }
        return .fail(.noFix(timeoutSeconds: timeout, reports: positionReports, bestErrorMeters: bestError))
    }

    private mutating func evaluate(_ report: GPSDReport.PositionReport) -> Step {
        let previousWasDeferred = deferredPrevious
        deferredPrevious = false
        guard report.mode >= rules.minimumMode.rawValue,
            let latitude = report.latitude, let longitude = report.longitude,
            PositionValidity.isPlausible(latitude: latitude, longitude: longitude)
        else { return check(now: report.receivedNanoseconds) }
        if rules.requireTime, Self.receiverTime(of: report) == nil {
            return check(now: report.receivedNanoseconds)
        }

        let modeChanged = previous.map { $0.mode != report.mode } ?? false
        var error = report.horizontalError
        if let value = error, value >= Self.noDOPErrorMeters {
            error = nil
        }
        let carriedOver = error != nil && error == previous?.horizontalError
        if modeChanged, error == nil || carriedOver, !previousWasDeferred {
            deferredPrevious = true
            return check(now: report.receivedNanoseconds)
        }

        guard let error else {
            if rules.acceptUnknownError {
                return .accept(makeFix(report, error: nil))
            }
            return check(now: report.receivedNanoseconds)
        }
        bestError = min(bestError ?? error, error)
        if error <= rules.maximumErrorMeters {
            return .accept(makeFix(report, error: error))
        }
        if error <= rules.timeoutFallbackErrorMeters, error < (fallback?.error ?? .infinity) {
            fallback = (report, error)
        }
        return check(now: report.receivedNanoseconds)
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

    private func makeFix(_ report: GPSDReport.PositionReport, error: Double?) -> Fix {
        let received = UTCTimestamp(nanosecondsSinceEpoch: report.receivedRealtimeNanoseconds)
        let time = Self.receiverTime(of: report)
        let altitude = report.mode >= 3 ? (report.altitudeMSL ?? report.altitudeHAE) : nil
        return Fix(
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
            refusedReceiverTime: time == nil ? report.timeSeconds.map { UTCTimestamp(seconds: $0, nanoseconds: report.timeNanoseconds) } : nil
        )
    }
}
