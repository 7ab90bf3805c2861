import ArgumentParser
import FoundationEssentials
import GeoAttrClient
import GeoAttrLinux
import GeoAttrGPSD
import GeoAttrModel
import GeoAttrSettings
import GeoIndex
import Logging

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Diagnostics for a device where attributes are missing or wrong. Each finding says what to do.
struct DoctorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "doctor",
        abstract: "Check gpsd, the receiver, the clock, the daemon, its socket and runtime directory, and the state file; print each finding with its fix.",
        discussion: "Exit codes: 0 nothing failed (warnings possible); 1 at least one check failed; 64 invalid arguments.")

    @OptionGroup var options: ClientOptions

    @Option(help: "gpsd address as HOST:PORT.")
    var gpsd: String = GPSDEndpoint.default.description

    @Option(help: "Seconds to wait for a fix from the receiver.")
    var timeout: Double = 10

    @Option(help: "The state file the device supervisor writes (state.file).")
    var stateFile: String = ProductPaths.stateFile

    enum Level: String {
        case ok = "ok  "
        case warning = "warn"
        case failure = "FAIL"
    }

    struct Finding {
        var level: Level
        var check: String
        var detail: String
        var fix: String?
    }

    func validate() throws {
        guard GPSDEndpoint(parsing: gpsd) != nil else { throw ValidationError("--gpsd must be HOST:PORT") }
        guard timeout > 0, timeout <= 300 else { throw ValidationError("--timeout must be 0 to 300 seconds") }
    }

    func run() async throws {
        signal(SIGPIPE, SIG_IGN)
        var findings: [Finding] = []
        findings += await daemonFindings()
        findings += runtimeLayoutFindings()
        let receiver = await receiverFindings()
        findings += receiver
        if receiver.contains(where: { $0.check == "gpsd" && $0.level == .ok }) {
            findings += gpsdAccessFindings()
        }
        findings += gpsdSharedMemoryFindings()
        findings.append(clockFinding())
        for finding in findings {
            StandardStreams.out("[\(finding.level.rawValue)] \(finding.check): \(finding.detail)")
            if let fix = finding.fix { StandardStreams.out("       fix: \(fix)") }
        }
        if findings.contains(where: { $0.level == .failure }) { throw ExitCode(1) }
    }

    private func daemonFindings() async -> [Finding] {
        let client = GeoAttrClient(socketPath: options.socket, timeout: .seconds(5))
        let status: StatusDocument
        do {
            status = try await client.statusDocument()
        } catch {
            switch error {
            case .unreachable(_, let reason):
                let permission = reason.lowercased().contains("permission")
                return [Finding(
                    level: .failure, check: "socket", detail: "cannot open \(options.socket) (\(reason))",
                    fix: permission
                        ? "add this user to the socket's group (usermod -aG geoattr $USER), then log in again"
                        : "start the daemon: systemctl start geoattrd.socket geoattrd; or pass --socket PATH")]
            case .api(403, _, let message):
                // The daemon's refusal names the access.rules entry (or the default) that decides.
                return [Finding(
                    level: .failure, check: "access", detail: "the daemon refuses this user: \(message)",
                    fix: "change what the message names in access.rules (/etc/geoattrd/geoattrd.yaml; a uid: entry decides before every gid: entry), then: systemctl reload geoattrd")]
            default:
                return [Finding(level: .failure, check: "daemon", detail: "\(error)", fix: "journalctl -u geoattrd")]
            }
        }
        var findings = [Finding(level: .ok, check: "socket", detail: "\(options.socket) answers")]
        if status.state == PowerState.background.rawValue {
            findings.append(Finding(
                level: .warning, check: "state", detail: "the daemon is paused (background): no fixes are taken",
                fix: "the device supervisor's state file says background; or: geoattrctl state foreground"))
        } else {
            findings.append(Finding(level: .ok, check: "state", detail: "foreground"))
        }
        for reason in status.degraded {
            findings.append(Finding(
                level: .warning, check: "degraded", detail: reason,
                fix: "apt install geoattrd-geodata (the world index, at /usr/share/geoattrd/world.gidx); or set index.path (or --index) to another index"))
        }
        if let problem = status.indexProblem {
            // The package's file gone: geoattrd-geodata was removed, not damaged.
            let path = IndexLocator.installedIndex
            var missing = stat()
            let packageGone = problem.hasPrefix(path + ":") && lstat(path, &missing) != 0 && errno == ENOENT
            findings.append(Finding(
                level: .warning, check: "index", detail: "the daemon refused its index file: \(problem)",
                fix: packageGone
                    ? "apt install geoattrd-geodata: \(path) is its file; the daemon takes it when the file appears (the index it loaded before stays in service until then)"
                    : "put a valid index there (`geoattrctl index info FILE` checks one, `geoattrctl index build` makes one); the daemon takes it when the file is replaced, or on SIGHUP"))
        }
        if let error = status.lastAttempt?.error {
            findings.append(Finding(level: .warning, check: "last fix", detail: error))
        }
        if let attributes = try? await client.attributes() {
            findings.append(Finding(
                level: attributes.stale ? .warning : .ok, check: "attributes",
                detail: "served, \(attributes.ageS) s old, from \(attributes.source)\(attributes.stale ? " (stale)" : "")",
                fix: attributes.stale ? "the receiver has not delivered a fix within the TTL: see the gpsd checks" : nil))
        } else {
            findings.append(Finding(
                level: .failure, check: "attributes", detail: "no location served yet",
                fix: "wait for the first fix, or configure a static location"))
        }
        return findings
    }


    /// One fix from gpsd, waiting a little for a gpsd that is not listening yet. Doctor's first
    /// request may have started the daemon, and a fix it takes starts gpsd.socket through the
    /// relay (geoattrd-gpsd.service Wants=gpsd.socket): a gpsd that comes up meanwhile is
    /// reported as such (`cameUp`), not as down.
    private func fixWaitingForGPSD(_ endpoint: GPSDEndpoint) async -> (result: Result<Fix, FixError>, cameUp: Bool) {
        var rules = FixAcceptanceRules()
        rules.timeout = .milliseconds(Int64(timeout * 1000))
        rules.noSatelliteTimeout = rules.timeout
        let attempt = { () async -> Result<Fix, FixError> in
            do throws(FixError) {
                return .success(try await GPSDFixSource(endpoint: endpoint, rules: rules, logger: Logger(label: "geoattrctl.doctor")).fix())
            } catch {
                return .failure(error)
            }
        }
        var result = await attempt()
        var cameUp = false
        let deadline = ContinuousClock.now + .seconds(3)
        while case .failure(.gpsdUnreachable) = result, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(250))
            result = await attempt()
            cameUp = true
        }
        return (result, cameUp)
    }

    private func receiverFindings() async -> [Finding] {
        guard let endpoint = GPSDEndpoint(parsing: gpsd) else { return [] }
        let (result, cameUp) = await fixWaitingForGPSD(endpoint)
        switch result {
        case .success(let fix):
            let error = fix.horizontalErrorMeters.map { "\(Int($0.rounded())) m" } ?? "unknown"
            let reachable = cameUp
                ? "reachable at \(endpoint) (it was not listening when doctor started: geoattrd's relay, geoattrd-gpsd.service, Wants=gpsd.socket and starts it when the daemon takes a fix)"
                : "reachable at \(endpoint)"
            var findings = [
                Finding(level: .ok, check: "gpsd", detail: reachable),
                Finding(
                    level: .ok, check: "receiver",
                    detail: "\(fix.mode == .threeDimensional ? "3D" : "2D") fix, horizontal error \(error), in \(Int(fix.timeToFixMilliseconds ?? 0)) ms"),
            ]
            // gpsfake (and simulators) feed gpsd through a pseudo-terminal: the fixes carry the
            // recording's times, which say nothing of the clocks.
            if fix.receiverDevice.hasPrefix("/dev/pts/") {
                findings[1].level = .warning
                findings[1].detail += "; gpsd's device \(fix.receiverDevice) is a pseudo-terminal: a recorded track (gpsfake) or a simulator, not a receiver"
                findings[1].fix = "expected while checking with a recorded track; for the device's own position, stop the replay and give gpsd the receiver (DEVICES in /etc/default/gpsd)"
                if let time = fix.refusedReceiverTime ?? fix.receiverTime, abs(time.seconds - fix.receivedAt.seconds) > 300 {
                    findings.append(Finding(
                        level: .ok, check: "clock",
                        detail: "the replayed fixes carry the recording's time \(time.iso8601) (the system clock reads \(fix.receivedAt.iso8601)): expected of a replay: fix_time shows it, and the result's age and freshness go by the system clock"))
                }
            } else if let refused = fix.refusedReceiverTime {
                findings.append(Finding(
                    level: .warning, check: "clock",
                    detail: "the receiver's time \(refused.iso8601) cannot be right next to the system clock \(fix.receivedAt.iso8601); fixes are dated by the system clock",
                    fix: "if the system clock is right, the receiver dates its fixes wrongly (a GPS week rollover its firmware cannot handle: update it or replace the receiver); if not, check NTP or chrony (chronyc tracking)"))
            } else if let receiverTime = fix.receiverTime {
                let skew = abs(receiverTime.seconds - fix.receivedAt.seconds)
                if skew > 300 {
                    findings.append(Finding(
                        level: .warning, check: "clock", detail: "the system clock differs from GPS time by \(skew) s",
                        fix: "check NTP or chrony (chronyc tracking); gpsd can feed chrony through SHM"))
                }
            }
            return findings
        case .failure(let error):
            switch error {
            case .gpsdUnreachable:
                // gpsd's guard answers users it does not name with a reset, which reads the same.
                let guarded = getuid() == 0 ? "" : "; or geoattrd-gpsd-guard refuses this user: run doctor as root"
                return [Finding(
                    level: .failure, check: "gpsd", detail: error.description,
                    fix: "systemctl start gpsd.socket (geoattrd's relay, geoattrd-gpsd.service, Wants=gpsd.socket: it starts it too when the daemon takes a fix); check GPSD_OPTIONS and DEVICES in /etc/default/gpsd\(guarded)")]
            case .timeout:
                return [
                    Finding(level: .ok, check: "gpsd", detail: "reachable at \(endpoint)"),
                    Finding(level: .failure, check: "receiver", detail: "no report from any receiver", fix: "attach the receiver; check DEVICES in /etc/default/gpsd and `gpsctl`"),
                ]
            case .noFix, .noSatellites:
                return [
                    Finding(level: .ok, check: "gpsd", detail: "reachable at \(endpoint)"),
                    Finding(level: .warning, check: "receiver", detail: error.description, fix: "give the antenna a view of the sky"),
                ]
            default:
                return [Finding(level: .failure, check: "gpsd", detail: error.description)]
            }
        }
    }

    /// Who else reaches gpsd: it serves the exact position to every client it accepts.
    private func gpsdAccessFindings() -> [Finding] {
        guard let endpoint = GPSDEndpoint(parsing: gpsd) else { return [] }
        let guardFix = "to let only root, geoattrd's relay and the users you name reach it: systemctl enable --now geoattrd-gpsd-guard.service (users in GPSD_GUARD_USERS of /etc/default/geoattrd-gpsd-guard)"
        switch GPSDExposure.probe(endpoint) {
        case .open(let uid) where uid == GPSDExposure.nobody:
            return [Finding(
                level: .warning, check: "gpsd access",
                detail: "any local user reaches gpsd at \(endpoint) (tried as uid \(uid)) and reads the exact position: gpsd has no access control, and access.rules do not apply to it",
                fix: guardFix)]
        case .open(let uid):
            return [Finding(
                level: .warning, check: "gpsd access",
                detail: "this user (uid \(uid)) reaches gpsd at \(endpoint) and reads the exact position; so does every local user that no guard refuses (run doctor as root to know)",
                fix: guardFix)]
        case .closed(let uid):
            return [Finding(level: .ok, check: "gpsd access", detail: "a local user no one named (uid \(uid)) is refused at \(endpoint)")]
        case .unknown(let uid, let reason):
            return [Finding(
                level: .warning, check: "gpsd access", detail: "could not tell whether uid \(uid) reaches gpsd at \(endpoint) (\(reason))",
                fix: guardFix)]
        case .notLocal:
            return []
        }
    }

    private func clockFinding() -> Finding {
        let now = UTCTimestamp.now()
        if now.seconds < 1_704_067_200 {
            return Finding(
                level: .failure, check: "clock", detail: "the system clock reads \(now.iso8601), before 2024",
                fix: "the device has no synchronised clock yet: start NTP/chrony, or let gpsd feed chrony")
        }
        return Finding(level: .ok, check: "clock", detail: "system clock \(now.iso8601)")
    }
}
