internal import CGPS
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import GeoAttrCore
import GeoAttrLinux
import GeoAttrModel
import Logging
import GeoAttrSettings

/// One attempt: connect, watch, read until the evaluator decides, release. Blocking: it runs
/// on a dedicated thread.
///
/// The release is the battery contract: gpsd may power the receiver down when nobody watches,
/// so the watch is disabled and the connection closed right after the accepted report, and
/// nothing stays connected between attempts.
struct GPSDSession {
    let endpoint: GPSDEndpoint
    let rules: FixAcceptanceRules
    let logger: Logger
    let receivers: ReceiverMemory

    func run(wake: WakePipe) -> Result<Fix, FixError> {
        var evaluator = FixEvaluator(rules: rules, startNanoseconds: CGPS_monotonic_ns(), receivers: receivers.snapshot)
        defer { receivers.record(evaluator.receivers) }
        return run(wake: wake, evaluator: &evaluator)
    }

    private func run(wake: WakePipe, evaluator: inout FixEvaluator) -> Result<Fix, FixError> {
        // Cancelled before this thread got to run (the device went to the background while
        // threads queued up): no connection at all, and no watch that would wake the receiver.
        if Self.hasFired(wake) { return .failure(.cancelled) }
        var openError: Int32 = 0
        guard let connection = CGPS_open(endpoint.host, String(endpoint.port), &openError) else {
            return .failure(.gpsdUnreachable(endpoint: endpoint.description, reason: Self.text(openError)))
        }
        if Self.hasFired(wake) {
            CGPS_close(connection)
            return .failure(.cancelled)
        }
        logger.debug("connected to gpsd", metadata: ["gpsd": "\(endpoint)"])
        let watchError = CGPS_watch(connection, true)
        guard watchError == 0 else {
            CGPS_close(connection)
            return .failure(.connectionLost(reason: "enabling the watch failed: \(Self.text(watchError))"))
        }

        var report = CGPS_report()
        while true {
            let now = CGPS_monotonic_ns()
            switch evaluator.check(now: now) {
            case .wait: break
            case .accept(let fix): return .success(release(connection, after: now, fix: fix))
            case .fail(let error): return .failure(releaseFailing(connection, error))
            }
            let waitNanoseconds = max(0, evaluator.nextDecisionNanoseconds - now)
            let waitMilliseconds = Int32(clamping: (waitNanoseconds + 999_999) / 1_000_000)
            switch CGPS_wait_read(connection, waitMilliseconds, wake.readFD, &report) {
            case Int32(CGPS_READ_REPORT):
                let parsed = GPSDReport(report)
                if case .position(let position) = parsed {
                    logger.trace(
                        "TPV",
                        metadata: [
                            "mode": "\(position.mode)", "eph": "\(position.horizontalError.map { "\($0)" } ?? "none")",
                            "alt": "\((position.altitudeMSL ?? position.altitudeHAE).map { "\($0)" } ?? "none")",
                            "time": "\(position.timeSeconds.map { "\($0)" } ?? "none")",
                        ])
                }
                let wasHolding = evaluator.isHoldingAReport
                switch evaluator.consume(parsed) {
                case .wait:
                    if !wasHolding, evaluator.isHoldingAReport {
                        logger.debug("holding the report for the next one", metadata: ["wait_ms": "\(rules.firstReportWait.nanosecondsValue / 1_000_000)"])
                    }
                    continue
                case .accept(let fix):
                    if let refused = fix.refusedReceiverTime {
                        logger.warning(
                            "receiver time ignored: it cannot be right; the fix is dated by the system clock",
                            metadata: ["receiver_time": "\(refused.iso8601)", "system_clock": "\(fix.receivedAt.iso8601)"])
                    }
                    return .success(release(connection, after: report.received_monotonic_ns, fix: fix))
                case .fail(let error): return .failure(releaseFailing(connection, error))
                }
            case Int32(CGPS_READ_TIMEOUT):
                continue
            case Int32(CGPS_READ_WOKEN):
                return .failure(releaseFailing(connection, .cancelled))
            case Int32(CGPS_READ_CLOSED):
                // No WATCH_DISABLE: the peer is gone, and writing to it would only fail.
                CGPS_close(connection)
                // What was already good enough is not thrown away with the connection.
                return keepBest(evaluator, orFail: "gpsd closed the connection")
            default:
                let reason = "waiting for gpsd failed: \(Self.text(errno))"
                CGPS_close(connection)
                return keepBest(evaluator, orFail: reason)
            }
        }
    }

    /// The connection is gone: what was already good enough is not thrown away with it.
    private func keepBest(_ evaluator: FixEvaluator, orFail reason: String) -> Result<Fix, FixError> {
        guard let fix = evaluator.bestWhenClosed() else {
            return .failure(.connectionLost(reason: "\(reason), before any report met the acceptance rules"))
        }
        logger.debug("the connection to gpsd ended: taking the best report seen", metadata: ["fallback": "\(fix.acceptedAsFallback == true)"])
        return .success(fix)
    }

    private func release(_ connection: OpaquePointer, after acceptedNanoseconds: Int64, fix: Fix) -> Fix {
        disableWatchAndClose(connection)
        let releaseMicros = (CGPS_monotonic_ns() - acceptedNanoseconds) / 1000
        logger.debug(
            "released gpsd after the accepted report",
            metadata: ["release_us": "\(releaseMicros)", "time_to_fix_ms": "\(fix.timeToFixMilliseconds ?? 0)"])
        return fix
    }

    private func releaseFailing(_ connection: OpaquePointer, _ error: FixError) -> FixError {
        disableWatchAndClose(connection)
        return error
    }

    private func disableWatchAndClose(_ connection: OpaquePointer) {
        _ = CGPS_watch(connection, false)
        CGPS_close(connection)
    }

    /// Whether the wake pipe was fired (the attempt was cancelled), without waiting.
    static func hasFired(_ wake: WakePipe) -> Bool {
        var fd = pollfd(fd: wake.readFD, events: Int16(POLLIN), revents: 0)
        return poll(&fd, 1, 0) > 0
    }

    static func text(_ code: Int32) -> String {
        guard let text = CGPS_error_text(code) else { return "error \(code)" }
        return String(cString: text)
    }
}
