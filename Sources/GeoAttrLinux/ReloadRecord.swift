import GeoAttrModel
package import SystemWrites
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The daemon's answer to its last SIGHUP, in the state directory, for `geoattrctl reload`
/// (the unit's ExecReload=): a signal carries no answer, and systemd 252 has no reload
/// notification, so whoever asks for a reload reads here whether it was applied. One field a
/// line, `name value`; the reason and the pending keys are single lines.
package struct ReloadRecord: Sendable, Equatable {
    package enum Outcome: String, Sendable {
        /// Written at start: names the daemon's pid, answers no reload.
        case started
        case applied
        case refused
    }

    package static let fileName = "reload"
    static let maximumSize = 16 * 1024

    package var pid: Int32
    /// The kernel's boot id: the record outlives a reboot in the state directory, and a pid and
    /// a boot-time clock mean nothing across one.
    package var bootID: String
    /// CLOCK_BOOTTIME when the daemon began reading the configuration: an answer counts for a
    /// signal sent before it, never for one sent after (a reload already under way read the file
    /// too early).
    package var startedNanoseconds: Int64
    package var outcome: Outcome
    /// Why the configuration was refused.
    package var reason: String
    /// Keys that changed and wait for the next restart.
    package var restartPending: [String]

    package init(
        pid: Int32, bootID: String = ReloadRecord.currentBootID(), startedNanoseconds: Int64, outcome: Outcome, reason: String = "",
        restartPending: [String] = []
    ) {
        self.pid = pid
        self.bootID = bootID
        self.startedNanoseconds = startedNanoseconds
        self.outcome = outcome
        self.reason = reason
        self.restartPending = restartPending
    }

    package static func path(in directory: String) -> String { "\(directory)/\(fileName)" }

    /// /proc/sys/kernel/random/boot_id, "" when it cannot be read.
    package static func currentBootID() -> String {
        guard let bytes = try? FileBytes.read("/proc/sys/kernel/random/boot_id", limit: 64) else { return "" }
        return String(decoding: bytes, as: UTF8.self).trimmingWhitespace()
    }

    /// The clock the record's times are on: the same in every process, and never set back.
    package static func now() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_BOOTTIME, &time)
        return Int64(time.tv_sec) &* 1_000_000_000 &+ Int64(time.tv_nsec)
    }

    package var text: String {
        // By scalar: "\r\n" is one Character, equal to neither.
        let line = { (value: String) in String(String.UnicodeScalarView(value.unicodeScalars.filter { $0 != "\n" && $0 != "\r" })) }
        return """
            pid \(pid)
            boot \(line(bootID))
            started \(startedNanoseconds)
            outcome \(outcome.rawValue)
            reason \(line(reason))
            pending \(restartPending.map(line).joined(separator: " "))

            """
    }

    /// Parses `text`; `nil` for anything this version did not write.
    package init?(parsing text: String) {
        var fields: [String: String] = [:]
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: false)
            fields[String(parts[0])] = parts.count > 1 ? String(parts[1]) : ""
        }
        guard let pid = fields["pid"].flatMap({ Int32($0) }), pid > 0,
            let started = fields["started"].flatMap({ Int64($0) }),
            let outcome = fields["outcome"].flatMap({ Outcome(rawValue: $0) })
        else { return nil }
        self.init(
            pid: pid, bootID: fields["boot"] ?? "", startedNanoseconds: started, outcome: outcome, reason: fields["reason"] ?? "",
            restartPending: (fields["pending"] ?? "").split(separator: " ").map(String.init))
    }

    /// Written atomically, mode 0600: the daemon's and root's to read.
    package func write(in directory: String) throws(AtomicFile.Failure) {
        try AtomicFile.replace(Self.path(in: directory), with: Array(text.utf8))
    }

    /// The record in `directory`; `nil` when there is none or it is not one.
    package static func read(in directory: String) throws(FileBytes.ReadError) -> ReloadRecord? {
        guard let bytes = try FileBytes.read(path(in: directory), limit: maximumSize) else { return nil }
        return ReloadRecord(parsing: String(decoding: bytes, as: UTF8.self))
    }
}
