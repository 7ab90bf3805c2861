/// Whether a latitude/longitude pair can be a real position.
///
/// (0, 0) is rejected: receivers and drivers report it for "no position", and it lies at sea.
public enum PositionValidity {
    public static func isPlausible(latitude: Double, longitude: Double) -> Bool {
        guard latitude.isFinite, longitude.isFinite else { return false }
        guard (-90.0...90.0).contains(latitude), (-180.0...180.0).contains(longitude) else { return false }
        return !(latitude == 0 && longitude == 0)
    }
}
