/// How many CPUs this process may run on: its affinity mask (`Cpus_allowed` in
/// /proc/self/status, which `taskset` and systemd's `CPUAffinity=` set), within `limit`.
///
/// NIO's `System.coreCount`, the usual limit, honours the cgroup CPU quota and cpuset (v1 and v2)
/// but not the affinity mask: a process held to one CPU would otherwise start one thread per CPU
/// of the machine, and those threads would take turns on its one CPU.
public enum UsableCPUs {
    public static func count(within limit: Int) -> Int {
        min(affinityCount() ?? limit, limit)
    }

    /// CPUs in `Cpus_allowed` (a hex mask, comma-separated in 32-bit groups); nil if unreadable.
    static func affinityCount() -> Int? {
        guard let status = try? FileBytes.read("/proc/self/status", limit: 1 << 16) else { return nil }
        let prefix = "Cpus_allowed:"
        for line in String(decoding: status, as: UTF8.self).split(separator: "\n") where line.hasPrefix(prefix) {
            let groups = line.dropFirst(prefix.count).split(separator: ",").map { UInt32($0.drop(while: \.isWhitespace), radix: 16) }
            guard !groups.isEmpty, groups.allSatisfy({ $0 != nil }) else { return nil }
            let count = groups.reduce(0) { $0 + ($1?.nonzeroBitCount ?? 0) }
            return count > 0 ? count : nil
        }
        return nil
    }
}
