import GeoAttrCore
import GeoAttrModel
import Synchronization

/// Attribute answers, head and body, reused while nothing a client could see has changed: the
/// served result (its generation), the client's grant, the format, the age in whole seconds and
/// the state. Sidecars poll for every batch they export; rendering JSON, or even building the
/// headers, each time would dominate.
final class ResponseCache: Sendable {
    struct Key: Hashable, Sendable {
        var generation: UInt64
        var level: PrecisionLevel
        var decimals: Int?
        var format: AttributeFormat
        var ageSeconds: Int64
        var stale: Bool
        var state: PowerState
    }

    private let entries = Mutex<[Key: APIResponse]>([:])
    private static let capacity = 64

    /// The answer made for `key`, if one was.
    func cached(for key: Key) -> APIResponse? {
        entries.withLock { $0[key] }
    }

    func response(for key: Key, render: () -> APIResponse) -> APIResponse {
        if let cached = cached(for: key) { return cached }
        let rendered = render()
        entries.withLock { entries in
            if entries.count >= Self.capacity { entries.removeAll(keepingCapacity: true) }
            entries[key] = rendered
        }
        return rendered
    }
}
