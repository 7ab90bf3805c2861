import ArgumentParser
import GeoAttrLinux
import GeoAttrModel

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// `geoattrctl reload`: SIGHUP, then the daemon's answer from its state directory. The unit's
/// ExecReload= runs it, so that `systemctl reload geoattrd` fails when the configuration is
/// refused instead of reporting a signal delivered.
struct ReloadCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reload",
        abstract: "Reload the daemon's configuration (SIGHUP) and wait until it is applied or refused.",
        discussion: """
            The daemon answers in STATE_DIR/reload (readable by root and the daemon's user). \
            geoattrd.service runs `geoattrctl reload --pid $MAINPID` as its ExecReload=, so \
            `systemctl reload geoattrd` fails when the configuration is refused, and `systemctl \
            status geoattrd` shows why.

            Exit codes: 0 applied (keys that wait for a restart are named on standard error); 64 \
            invalid arguments; 69 no such daemon; 75 no answer in time; 77 not permitted to signal \
            the daemon; 78 refused: the running configuration stays (the reason on standard error).
            """)

    @Option(help: "The daemon's process id (default: the one recorded in STATE_DIR/reload).")
    var pid: Int32?

    @Option(name: .customLong("state-dir"), help: "The daemon's state.dir (default: $GEOATTRD_STATE_DIR, else /var/lib/geoattrd).")
    var stateDirectoryOption: String?

    /// The unit's Environment= reaches ExecReload= too: a state.dir set there is found.
    var stateDirectory: String {
        stateDirectoryOption ?? getenv("GEOATTRD_STATE_DIR").map { String(cString: $0) } ?? ProductPaths.stateDirectory
    }

    @Option(help: "Seconds to wait for the answer.")
    var timeout: Double = 30

    func validate() throws {
        if let pid, pid <= 0 { throw ValidationError("--pid must be a process id") }
        guard timeout > 0, timeout <= 300 else { throw ValidationError("--timeout must be 0 to 300 seconds") }
        guard stateDirectory.hasPrefix("/") else { throw ValidationError("--state-dir (or GEOATTRD_STATE_DIR) must be an absolute path") }
    }

    func run() async throws {
        let recorded: ReloadRecord?
        do {
            recorded = try ReloadRecord.read(in: stateDirectory)
        } catch {
            // Only root and the daemon's user read the state directory.
            guard pid != nil else {
                StandardStreams.err("cannot read \(ReloadRecord.path(in: stateDirectory)): \(error) (run as root or as the daemon's user)")
                throw ExitCodes.forbidden
            }
            recorded = nil
        }
        let bootID = ReloadRecord.currentBootID()
        guard let pid = pid ?? recorded.flatMap({ $0.bootID == bootID ? $0.pid : nil }) else {
            StandardStreams.err("no daemon recorded in \(ReloadRecord.path(in: stateDirectory)): pass --pid (systemctl show -p MainPID geoattrd)")
            throw ExitCodes.daemonUnreachable
        }
        // A pid read from a file may have been reused since: signal only a geoattrd.
        if self.pid == nil, Self.command(of: pid) != "geoattrd" {
            StandardStreams.err("process \(pid), recorded in \(ReloadRecord.path(in: stateDirectory)), is not geoattrd: is the daemon running?")
            throw ExitCodes.daemonUnreachable
        }
        let sent = ReloadRecord.now()
        guard kill(pid, SIGHUP) == 0 else {
            let code = errno
            StandardStreams.err("cannot signal process \(pid): \(ErrnoText.describe(code))")
            throw code == EPERM ? ExitCodes.forbidden : ExitCodes.daemonUnreachable
        }
        let deadline = ContinuousClock.now + .milliseconds(Int64(timeout * 1000))
        while ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
            guard let record = try? ReloadRecord.read(in: stateDirectory), record.pid == pid, record.bootID == bootID,
                record.outcome != .started, record.startedNanoseconds >= sent
            else {
                if kill(pid, 0) != 0, errno == ESRCH {
                    StandardStreams.err("process \(pid) ended before it answered the reload")
                    throw ExitCodes.daemonUnreachable
                }
                continue
            }
            switch record.outcome {
            case .refused:
                StandardStreams.err("geoattrd refused the configuration and keeps the running one: \(record.reason)")
                throw ExitCodes.configurationRefused
            case .applied, .started:
                for key in record.restartPending {
                    StandardStreams.err("\(key) changed: takes effect at the next restart (systemctl restart geoattrd)")
                }
                return
            }
        }
        StandardStreams.err("geoattrd (process \(pid)) did not answer the reload within \(timeout) s in \(ReloadRecord.path(in: stateDirectory)); journalctl -u geoattrd says what it did")
        throw ExitCodes.noFix
    }

    /// /proc/PID/comm, without its newline; `nil` when there is no such process to see.
    static func command(of pid: Int32) -> String? {
        guard let bytes = try? FileBytes.read("/proc/\(pid)/comm", limit: 64) else { return nil }
        return String(decoding: bytes, as: UTF8.self).trimmingWhitespace()
    }
}
