#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Every API connection holds a descriptor, and systemd starts services with a soft
/// RLIMIT_NOFILE of 1024: below `api.max_connections` (1024) plus what the daemon holds itself.
/// Out of descriptors, the daemon could neither accept (clients waited in the backlog instead of
/// getting their 503) nor write its cache. So at start the soft limit is raised as far as the
/// connection limit needs (never above the hard limit), and when even the hard limit is too
/// low, the connection limit is lowered to fit: clients beyond it get the clean 503.
enum DescriptorBudget {
    /// Descriptors kept for everything but admitted connections: the listener, the log,
    /// inotify, the event loops, cache and output writes, gpsd, and connections being refused.
    static let reserve = 128

    struct Outcome: Sendable {
        /// The connection limit that fits.
        var connections: Int
        /// The soft limit before and after, when it was raised.
        var raised: (from: UInt64, to: UInt64)?
        /// The soft limit in force.
        var limit: UInt64
    }

    static func fit(connections wanted: Int) -> Outcome {
        let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
        var limit = rlimit()
        guard getrlimit(resource, &limit) == 0 else { return Outcome(connections: wanted, raised: nil, limit: 0) }
        let needed = rlim_t(wanted + reserve)
        var raised: (from: UInt64, to: UInt64)?
        if limit.rlim_cur < needed {
            var higher = limit
            higher.rlim_cur = min(needed, limit.rlim_max)
            if higher.rlim_cur > limit.rlim_cur, setrlimit(resource, &higher) == 0 {
                raised = (UInt64(limit.rlim_cur), UInt64(higher.rlim_cur))
                limit = higher
            }
        }
        let available = Int(clamping: limit.rlim_cur) - reserve
        return Outcome(connections: max(1, min(wanted, available)), raised: raised, limit: UInt64(limit.rlim_cur))
    }
}
