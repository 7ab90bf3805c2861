public import GeoAttrModel

/// The reads of an `AttributeStore` and nothing else: what the API server, the output files and
/// systemd's status line are given, so that none of them can change what is served or the status.
public struct AttributeReader: Sendable {
    private let store: AttributeStore

    public init(_ store: AttributeStore) {
        self.store = store
    }

    public var served: ServedResult? { store.served }
    public var status: DaemonStatus { store.status }
    public var powerState: PowerState { store.powerState }

    /// The served result and the power state, read together (one lock: the API's hot path).
    public var servedAndPowerState: (served: ServedResult?, powerState: PowerState) { store.servedAndPowerState }
    public var servedMarkAndPowerState: (served: ServedMark?, powerState: PowerState) { store.servedMarkAndPowerState }

    /// The current result at once, then every change. Slow consumers see only the newest.
    public func updates() -> AsyncStream<ServedResult?> { store.updates() }

    /// Every change of the power state (foreground/background).
    public func powerStateChanges() -> AsyncStream<PowerState> { store.powerStateChanges() }

    /// How many `updates()` streams are open.
    public var updateSubscriberCount: Int { store.updateSubscriberCount }
}

extension AttributeStore {
    /// A view of this store that can only read it.
    public var reader: AttributeReader { AttributeReader(self) }
}
