import GeoAttrModel
import GeoPlaces

extension LocationResult {
    /// A complete result (a 3D receiver fix in Brussels with every place field), for tests of
    /// what stores, caches and serves results.
    public static func sample(generation: UInt64 = 42) -> LocationResult {
        let fix = Fix(
            latitude: 50.8466, longitude: 4.3528, altitudeMeters: 56, mode: .threeDimensional, horizontalErrorMeters: 12.5,
            receiverTime: UTCTimestamp(seconds: 1_795_000_000, nanoseconds: 250_000_000), timeSource: .receiver,
            receivedAt: UTCTimestamp(seconds: 1_795_000_001), timeToFixMilliseconds: 812.5, origin: .gps)
        return LocationResult(
            fix: fix, place: GeoPlace(countryCode: "BE", regionCode: "BE-BRU", localityName: "Brussels", postalCode: "1000", continentCode: "EU"),
            source: .gps, updatedAt: UTCTimestamp(seconds: 1_795_000_002), indexVersion: "world 1", generation: generation)
    }
}
