import ArgumentParser
import FoundationEssentials
import GeoAttrClient
import GeoAttrLinux
import GeoAttrGPSD
import GeoAttrModel

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Diagnostics for a device where attributes are missing or wrong (the Core Location
/// diagnostics seed, for Linux). Each finding says what to do.
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
    var stateFile: String = "/run/geoattrd/state"

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
        findings.append(clockFinding())
        for finding in findings {
            StandardStreams.out("[\(finding.level.rawValue)] \(finding.check): \(finding.detail)")
            if let fix = finding.fix { StandardStreams.out("       fix: \(fix)") }
        }
        if findings.contains(where: { $0.level == .failure }) { throw ExitCode(1) }
    }

    private func daemonFindings() async -> [Finding] {
        let client = GeoAttrClient(socketPath: options.socket, timeout: .seconds(5))
        let status: String
        do {
            status = try await client.status().text
        } catch {
            switch error {
            case .unreachable(_, let reason):
                let permission = reason.lowercased().contains("permission")
                return [Finding(
                    level: .failure, check: "socket", detail: "cannot open \(options.socket) (\(reason))",
                    fix: permission
                        ? "add this user to the socket's group (usermod -aG geoattr $USER), then log in again"
                        : "start the daemon: systemctl start geoattrd.socket geoattrd; or pass --socket PATH")]
            case .api(403, _, _):
                return [Finding(level: .failure, check: "access", detail: "the daemon refuses this user's uid", fix: "add a rule for this uid or gid to access.rules")]
            default:
                return [Finding(level: .failure, check: "daemon", detail: "\(error)", fix: "journalctl -u geoattrd")]
            }
        }
        struct StatusView: Decodable {
            struct Attempt: Decodable { var error: String? }
            var state: String
            var degraded: [String]
            var index_problem: String?
            var last_attempt: Attempt?
        }
        let view = try? JSONDecoder().decode(StatusView.self, from: Data(status.utf8))
        var findings = [Finding(level: .ok, check: "socket", detail: "\(options.socket) answers")]
        if view?.state == "background" {
            findings.append(Finding(
                level: .warning, check: "state", detail: "the daemon is paused (background): no fixes are taken",
                fix: "the device supervisor's state file says background; or: geoattrctl state foreground"))
        } else {
            findings.append(Finding(level: .ok, check: "state", detail: "foreground"))
        }
        for reason in view?.degraded ?? [] {
            findings.append(Finding(
                level: .warning, check: "degraded", detail: reason, fix: "set index.path (or --index) to a world index"))
        }
        if let problem = view?.index_problem {
            findings.append(Finding(
                level: .warning, check: "index", detail: "the daemon refused its index file: \(problem)",
                fix: "put a valid index there (`geoattrctl index info FILE` checks one, `geoattrctl index build` makes one); the daemon takes it when the file is replaced, or on SIGHUP"))
        }
        if let error = view?.last_attempt?.error {
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

    /// The socket's directory and the state file, as the shipped units lay them out
    /// (tmpfiles.d/geoattrd.conf): /run/geoattrd geoattrd:geoattrd 0755, written by the daemon
    /// alone; the state file a regular file geoattrd:geoattr-state 0660, written in place by the
    /// device supervisors. Examined with lstat: nothing is followed.
    private func runtimeLayoutFindings() -> [Finding] {
        let socket = FileStatus(path: options.socket)
        // The clients' group: the socket's, or the shipped one when there is no socket to ask.
        let clientGroup = socket.status?.st_gid ?? AccountNames.gid(named: "geoattr")
        // The daemon's user: the socket's owner, or the shipped one.
        let daemonUser = socket.status?.st_uid ?? AccountNames.uid(named: "geoattrd")
        return runtimeDirectoryFindings(clientGroup: clientGroup, daemonUser: daemonUser)
            + stateFileFindings(clientGroup: clientGroup, daemonUser: daemonUser)
    }

    private static let shippedLayout = "systemd-tmpfiles --create geoattrd.conf (as root)"

    /// The socket's directory: written by the daemon alone.
    private func runtimeDirectoryFindings(clientGroup: UInt32?, daemonUser: UInt32?) -> [Finding] {
        let shipped = Self.shippedLayout
        var findings: [Finding] = []
        let directory = FileBytes.split(options.socket).directory
        let inRunDirectory = directory == "/run/geoattrd"
        let dirFix = { (local: String) in inRunDirectory ? "\(shipped): geoattrd:geoattrd 0755" : local }
        let dir = FileStatus(path: directory)
        if let status = dir.status {
            let mode = status.st_mode
            let described = "\(directory) \(Self.owners(status)) \(Self.octal(mode))"
            var problems: [Finding] = []
            if mode & S_IFMT != S_IFDIR {
                problems.append(Finding(
                    level: .failure, check: "runtime dir", detail: "\(directory) is \(FileBytes.kind(of: mode)), not a directory",
                    fix: dirFix("pass --socket with the daemon's socket path")))
            } else {
                if mode & 0o002 != 0 {
                    problems.append(Finding(
                        level: .failure, check: "runtime dir",
                        detail: "\(described) is writable by others: any user can move the socket aside and bind their own, or plant a FIFO or symbolic link",
                        fix: dirFix("chmod o-w \(directory)")))
                }
                if mode & 0o020 != 0 {
                    let clients = status.st_gid == clientGroup
                    problems.append(Finding(
                        level: clients ? .failure : .warning, check: "runtime dir",
                        detail: clients
                            ? "\(described) is writable by group \(AccountNames.groupName(status.st_gid)), the socket's group: any client can move the socket aside and bind its own, or plant a FIFO or symbolic link"
                            : "\(described) is writable by group \(AccountNames.groupName(status.st_gid)): its members can replace the socket",
                        fix: dirFix("chmod g-w \(directory)")))
                }
                if let daemonUser, status.st_uid != 0, status.st_uid != daemonUser {
                    problems.append(Finding(
                        level: .failure, check: "runtime dir",
                        detail: "\(described) is owned by \(AccountNames.userName(status.st_uid)), neither root nor the socket's owner \(AccountNames.userName(daemonUser)): that user can replace the socket",
                        fix: dirFix("chown \(AccountNames.userName(daemonUser)) \(directory)")))
                }
            }
            findings += problems.isEmpty
                ? [Finding(level: .ok, check: "runtime dir", detail: "\(described), written by its owner alone")]
                : problems
        } else {
            findings.append(Finding(
                level: .warning, check: "runtime dir", detail: "cannot examine \(directory): \(dir.error)",
                fix: inRunDirectory ? "\(shipped) creates it" : "pass --socket with the daemon's socket path"))
        }
        return findings
    }

    /// The state file: a regular file, written in place by the device's supervisors.
    private func stateFileFindings(clientGroup: UInt32?, daemonUser: UInt32?) -> [Finding] {
        let shipped = Self.shippedLayout
        var findings: [Finding] = []
        let inPlace = "systemd-tmpfiles --create geoattrd.conf (as root) makes it geoattrd:geoattr-state 0660; supervisors in group geoattr-state (usermod -aG geoattr-state USER) write it in place"
        let state = FileStatus(path: stateFile)
        guard let status = state.status else {
            if state.code == ENOENT {
                findings.append(Finding(
                    level: .warning, check: "state file",
                    detail: "\(stateFile) does not exist: the daemon follows state.default, and a supervisor may not be able to create it",
                    fix: "\(shipped) creates it, empty; or pass --state-file with the daemon's state.file"))
            } else {
                findings.append(Finding(
                    level: .warning, check: "state file", detail: "cannot examine \(stateFile): \(state.error)",
                    fix: "run geoattrctl doctor as root, or as a member of geoattr-state"))
            }
            return findings
        }
        let mode = status.st_mode
        let described = "\(stateFile) \(Self.owners(status)) \(Self.octal(mode))"
        let remove = mode & S_IFMT == S_IFDIR ? "rm -r" : "rm"
        let replace = "\(remove) \(stateFile) (as root; nothing is followed), then \(shipped) creates a regular file in its place"
        if mode & S_IFMT == S_IFLNK {
            findings.append(Finding(
                level: .failure, check: "state file",
                detail: "\(stateFile) is a symbolic link: the daemon refuses it and ignores the state written through it", fix: replace))
            return findings
        }
        if mode & S_IFMT != S_IFREG {
            findings.append(Finding(
                level: .failure, check: "state file",
                detail: "\(stateFile) is \(FileBytes.kind(of: mode)), not a regular file: the daemon refuses it", fix: replace))
            return findings
        }
        var problems: [Finding] = []
        if mode & 0o002 != 0 {
            problems.append(Finding(
                level: .warning, check: "state file", detail: "\(described) is writable by others: any user can pause the device", fix: inPlace))
        }
        if status.st_gid == clientGroup, mode & 0o020 != 0 {
            problems.append(Finding(
                level: .warning, check: "state file",
                detail: "\(described): its group is the socket's, \(AccountNames.groupName(status.st_gid)): every client can pause the device",
                fix: inPlace))
        }
        if let daemonUser, status.st_uid != 0, status.st_uid != daemonUser {
            problems.append(Finding(
                level: .warning, check: "state file",
                detail: "\(described) is owned by \(AccountNames.userName(status.st_uid)), who can change its mode and group", fix: inPlace))
        }
        findings += problems.isEmpty
            ? [Finding(level: .ok, check: "state file", detail: "\(described), a regular file")]
            : problems
        return findings
    }

    /// What lstat says of a path, or why it could not say.
    private struct FileStatus {
        var status: stat?
        var code: Int32 = 0
        var error: String { String(cString: strerror(code)) }

        init(path: String) {
            var status = stat()
            if lstat(path, &status) == 0 {
                self.status = status
            } else {
                code = errno
            }
        }
    }

    private static func octal(_ mode: mode_t) -> String {
        let digits = String(mode & 0o7777, radix: 8)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }

    private static func owners(_ status: stat) -> String { "\(AccountNames.userName(status.st_uid)):\(AccountNames.groupName(status.st_gid))" }

    private func receiverFindings() async -> [Finding] {
        guard let endpoint = GPSDEndpoint(parsing: gpsd) else { return [] }
        var rules = FixAcceptanceRules()
        rules.timeout = .milliseconds(Int64(timeout * 1000))
        rules.noSatelliteTimeout = rules.timeout
        do {
            let fix = try await GPSDFixSource(endpoint: endpoint, rules: rules).fix()
            let error = fix.horizontalErrorMeters.map { "\(Int($0.rounded())) m" } ?? "unknown"
            var findings = [
                Finding(level: .ok, check: "gpsd", detail: "reachable at \(endpoint)"),
                Finding(
                    level: .ok, check: "receiver",
                    detail: "\(fix.mode == .threeDimensional ? "3D" : "2D") fix, horizontal error \(error), in \(Int(fix.timeToFixMilliseconds ?? 0)) ms"),
            ]
            if let refused = fix.refusedReceiverTime {
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
        } catch {
            switch error {
            case .gpsdUnreachable:
                return [Finding(level: .failure, check: "gpsd", detail: error.description, fix: "systemctl start gpsd.socket; check GPSD_OPTIONS and DEVICES in /etc/default/gpsd")]
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
