import GeoAttrCore
import GeoAttrModel
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Attribute answers, head and body, reused while nothing a client could see has changed: the
/// served result (its generation), the client's grant, the format, the age in whole seconds and
/// the state. Sidecars poll for every batch they export; rendering JSON, or even building the
/// headers, each time would dominate.
final class ResponseCache: Sendable {
    struct Key: Equatable, Sendable {
        var generation: UInt64
        var level: PrecisionLevel
        var decimals: Int?
        var format: AttributeFormat
        var ageSeconds: Int64
        var stale: Bool
        var state: PowerState
    }

    /// One list of answers per shard, newest last. A list, not a dictionary: the answer looked
    /// for is nearly always one of the last few made, and comparing a key costs less than
    /// hashing it.
    private final class Shard: Sendable {
        let entries = Mutex<[(key: Key, response: APIResponse)]>([])
    }

    /// A thread uses the shard its identity picks, so each event loop (a thread of its own)
    /// looks its answers up under a lock no other loop takes: the loops' cores do not pass the
    /// lock back and forth on every request. Any thread may use any shard; a loop's answers are
    /// rendered once for it.
    private let shards = (0..<ResponseCache.shardCount).map { _ in Shard() }
    private static let shardCount = 8
    private static let capacity = 64

    /// The answer made for `key`, if one was.
    func cached(for key: Key) -> APIResponse? {
        shard.entries.withLock { entries in
            // Lookups outnumber additions by far: no `last(where:)` closure in the way.
            var index = entries.endIndex
            while index > entries.startIndex {
                index -= 1
                if entries[index].key == key { return entries[index].response }
            }
            return nil
        }
    }

    func response(for key: Key, render: () -> APIResponse) -> APIResponse {
        if let cached = cached(for: key) { return cached }
        let rendered = render()
        shard.entries.withLock { entries in
            if entries.count >= Self.capacity { entries.removeAll(keepingCapacity: true) }
            entries.append((key, rendered))
        }
        return rendered
    }

    private var shard: Shard {
        // Fibonacci hashing of the thread's identity (an address): its top bits pick the shard.
        #if canImport(Darwin)
        let thread = UInt(bitPattern: pthread_self())
        #else
        let thread = UInt(pthread_self())
        #endif
        let mixed = UInt64(thread) &* 0x9E37_79B9_7F4A_7C15
        return shards[Int(mixed >> 61) % Self.shardCount]
    }
}
