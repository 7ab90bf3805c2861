public import GeoPlaces
import Synchronization

/// The offline reverse geocoder, as the daemon's core sees it.
public protocol Geocoding: Sendable {
    /// What is known about the position; `nil` fields where nothing is known.
    func place(latitude: Double, longitude: Double) -> GeoPlace
    /// Identifies the index in provenance and status (`name version, built date`).
    var indexVersion: String { get }
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
}
