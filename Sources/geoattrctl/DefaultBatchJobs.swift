import GeoAttrLinux
import NIOCore

/// How many jobs `lookup --batch` runs without `--jobs`: the CPUs this process may use, at most 16
/// (`taskset -c 1` means one job).
enum DefaultBatchJobs {
    static let maximum = 16

    static var count: Int {
        min(UsableCPUs.count(within: System.coreCount), maximum)
    }
}
