public import GeoAttrModel
public import GeoPlaces

/// Decides which place a new fix gets: stationary reuse, and hysteresis so that country and
/// region do not flap when GPS jitter straddles a boundary (every flip of a string attribute
/// is a new metric series downstream).
public struct PlacePolicy: Sendable {
    public enum Decision: String, Sendable, Hashable {
        /// Within the stationary distance of the previous fix: its place is kept.
        case stationary
        /// The geocoder's answer for the new fix.
        case geocoded
        /// The new fix lies in another area, but not convincingly yet: the previous place holds.
        case held
        /// The new area is confirmed (inside it by more than the error, or a second fix there).
        case switched
        /// No geocoder: location attributes only.
        case noGeocoder = "no-geocoder"
        /// The geocoder's file changed under it during the lookup: location attributes only,
        /// until the file is whole and loaded again.
        case indexFailed = "index-failed"
    }

    public var stationaryDistanceMeters: Double
    /// The area the previous fix pointed to but was not adopted.
    private var pendingArea: GeoPlace?

    public init(stationaryDistanceMeters: Double) {
        self.stationaryDistanceMeters = stationaryDistanceMeters
    }

    public mutating func place(
        for fix: Fix, previous: LocationResult?, geocoder: (any Geocoding)?
    ) -> (place: GeoPlace?, decision: Decision) {
        guard let geocoder else {
            pendingArea = nil
            return (nil, .noGeocoder)
        }
        if let previous, let previousPlace = previous.place,
            previous.indexVersion == geocoder.indexVersion,
            GreatCircle.distanceMeters(
                latitude1: previous.fix.latitude, longitude1: previous.fix.longitude,
                latitude2: fix.latitude, longitude2: fix.longitude) <= stationaryDistanceMeters
        {
            pendingArea = nil
            return (previousPlace, .stationary)
        }
        let candidate = geocoder.place(latitude: fix.latitude, longitude: fix.longitude)
        guard geocoder.isIntact else {
            pendingArea = nil
            return (nil, .indexFailed)
        }
        guard let previousPlace = previous?.place, !previousPlace.sameArea(as: candidate) else {
            pendingArea = nil
            return (candidate, .geocoded)
        }
        let error = fix.horizontalErrorMeters ?? 0
        if let margin = candidate.boundaryMarginMeters, margin > error {
            pendingArea = nil
            return (candidate, .switched)
        }
        if let pendingArea, pendingArea.sameArea(as: candidate) {
            self.pendingArea = nil
            return (candidate, .switched)
        }
        pendingArea = candidate
        return (previousPlace, .held)
    }
}
