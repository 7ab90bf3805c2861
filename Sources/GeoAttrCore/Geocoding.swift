public import GeoPlaces
import Synchronization

/// The offline reverse geocoder, as the daemon's core sees it.
public protocol Geocoding: Sendable {
    /// What is known about the position; `nil` fields where nothing is known.
    func place(latitude: Double, longitude: Double) -> GeoPlace
    /// Identifies the index in provenance and status (`name version, built date`).
    var indexVersion: String { get }
    /// False once the index's file has changed under it (it shrank, or was written): its answers
    /// since are void.
    /// Asked after each lookup; it stays false.
    var isIntact: Bool { get }
}

extension Geocoding {
    /// A geocoder without a file under it stays intact.
    public var isIntact: Bool { true }
}

/// Holds the geocoder in service and swaps it atomically: a lookup sees the old index or the
/// new one, never a gap. `nil` means degraded: location attributes only.
public final class GeocoderSlot: Sendable {
    private let current: Mutex<(any Geocoding)?>

    public init(_ geocoder: (any Geocoding)? = nil) {
        current = Mutex(geocoder)
    }

    public var geocoder: (any Geocoding)? { current.withLock { $0 } }

    public func replace(with geocoder: (any Geocoding)?) {
        current.withLock { $0 = geocoder }
    }

    /// Takes `failed` out of service (unless another has replaced it meanwhile) and tells the
    /// handler set with `onFailure`, which loads the file again. True when it was in service.
    @discardableResult
    public func fail(_ failed: any Geocoding) -> Bool {
        let removed = current.withLock { current -> Bool in
            guard let geocoder = current, geocoder.indexVersion == failed.indexVersion, !geocoder.isIntact else { return false }
            current = nil
            return true
        }
        if removed { failureHandler.withLock { $0 }?() }
        return removed
    }

    /// What `fail` calls after taking a geocoder out of service (the reloader's reload).
    public func onFailure(_ handler: @escaping @Sendable () -> Void) {
        failureHandler.withLock { $0 = handler }
    }

    private let failureHandler = Mutex<(@Sendable () -> Void)?>(nil)
}
