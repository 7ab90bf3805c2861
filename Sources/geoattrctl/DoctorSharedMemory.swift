#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// gpsd's System V shared memory, read from /proc/sysvipc/shm: gpsd writes every fix, exact, into
/// the segment with its key (0x47505344, "GPSD"), mode 0666 in Debian's build, which gpsd's guard
/// (nftables, by socket owner) does not reach. A segment is gpsd's by that key or by its creator
/// (a process named gpsd, for a gpsd built with another key); gpsd's NTP segments (NTP0 to NTP3,
/// for chrony) carry the time alone and are left out.
enum GPSDSharedMemory {
    struct Segment: Equatable {
        var key: Int32
        /// The permission bits (octal in the file).
        var mode: UInt32
        var creatorPID: Int32
    }

    static let gpsdKey: Int32 = 0x4750_5344
    static let ntpKeys: ClosedRange<Int32> = 0x4E54_5030...0x4E54_5033

    /// The segments listed in /proc/sysvipc/shm's text (the header line and malformed lines are
    /// skipped): key, perms and cpid are its first, third and fifth columns.
    static func segments(in text: String) -> [Segment] {
        text.split(separator: "\n").dropFirst().compactMap { line in
            let columns = line.split(separator: " ", omittingEmptySubsequences: true)
            guard columns.count >= 5, let key = Int32(columns[0]), let mode = UInt32(columns[2], radix: 8),
                let creator = Int32(columns[4])
            else { return nil }
            return Segment(key: key, mode: mode, creatorPID: creator)
        }
    }

    /// gpsd's segments with the position that every local user can read.
    static func readableByAll(in text: String, createdByGPSD: (Int32) -> Bool) -> [Segment] {
        segments(in: text).filter { segment in
            !ntpKeys.contains(segment.key) && segment.mode & 0o004 != 0
                && (segment.key == gpsdKey || createdByGPSD(segment.creatorPID))
        }
    }

    /// Whether process `pid` is (still) a gpsd: its /proc/PID/comm.
    static func isGPSD(_ pid: Int32) -> Bool {
        guard pid > 0, let file = fopen("/proc/\(pid)/comm", "r") else { return false }
        defer { fclose(file) }
        var name = [CChar](repeating: 0, count: 32)
        guard fgets(&name, Int32(name.count), file) != nil else { return false }
        return String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) == "gpsd\n"
    }

    /// The text of /proc/sysvipc/shm, or nil when it cannot be read (no /proc, or no System V IPC).
    static func table() -> String? {
        guard let file = fopen("/proc/sysvipc/shm", "r") else { return nil }
        defer { fclose(file) }
        var text = ""
        var line = [CChar](repeating: 0, count: 512)
        while fgets(&line, Int32(line.count), file) != nil {
            text += String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        return text
    }
}

extension DoctorCommand {
    /// gpsd's shared memory, which every local user may read whether or not gpsd's guard is on.
    func gpsdSharedMemoryFindings() -> [Finding] {
        guard let table = GPSDSharedMemory.table() else { return [] }
        let open = GPSDSharedMemory.readableByAll(in: table, createdByGPSD: GPSDSharedMemory.isGPSD)
        guard !open.isEmpty else {
            return [Finding(level: .ok, check: "gpsd access", detail: "no shared-memory segment of gpsd's that every local user can read")]
        }
        let segments = open.map { "key 0x\(String(UInt32(bitPattern: $0.key), radix: 16)) mode \(String($0.mode, radix: 8))" }
        return [Finding(
            level: .warning, check: "gpsd access",
            detail: "gpsd's shared memory is readable by every local user (\(segments.joined(separator: ", "))): the last fix, exact; geoattrd-gpsd-guard does not close it",
            fix: "a drop-in for gpsd.service with PrivateIPC=yes keeps gpsd's shared memory to gpsd (chrony then reads gpsd's time through its SOCK refclock, not SHM)")]
    }
}
