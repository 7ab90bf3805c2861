import GeoAttrCore
import GeoAttrModel
import Synchronization

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

    /// Newest last. A list, not a dictionary: the answer looked for is nearly always one of the
    /// last few made, and comparing a key costs less than hashing it.
    private let entries = Mutex<[(key: Key, response: APIResponse)]>([])
    private static let capacity = 64

    /// The answer made for `key`, if one was.
    func cached(for key: Key) -> APIResponse? {
        entries.withLock { entries in
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
        entries.withLock { entries in
            if entries.count >= Self.capacity { entries.removeAll(keepingCapacity: true) }
            entries.append((key, rendered))
        }
        return rendered
    }
}
