import GeoAttrLinux
import NIOCore

/// How many jobs `lookup --batch` runs without `--jobs`: the CPUs this process may use, at most 16.
///
/// NIO's `System.coreCount` honours the cgroup CPU quota and cpuset (v1 and v2) but not the
/// affinity mask, which is what `taskset -c 1` sets; that must still mean one job.
enum DefaultBatchJobs {
    static let maximum = 16

    static var count: Int {
        min(affinityCount() ?? System.coreCount, System.coreCount, maximum)
    }

    /// CPUs in `Cpus_allowed` of /proc/self/status (a hex mask, comma-separated in 32-bit groups).
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
