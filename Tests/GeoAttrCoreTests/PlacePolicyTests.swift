import GeoPlaces
import GeoAttrCore
import GeoAttrModel
import Testing

/// A geocoder with a straight north-south border at longitude 5.0: FR west of it, DE east.
/// A deliberate seam: the policy's rules are about answers, not about the index.
struct BorderGeocoder: Geocoding {
    var indexVersion = "test-border 1"
    var margins = true

    func place(latitude: Double, longitude: Double) -> GeoPlace {
        let east = longitude >= 5.0
        let margin = abs(longitude - 5.0) * 111_320 * 0.7
        return GeoPlace(
            countryCode: east ? "DE" : "FR", regionCode: east ? "DE-BW" : "FR-GES",
            localityName: east ? "Ostdorf" : "Ouestville", continentCode: "EU",
            boundaryMarginMeters: margins ? margin : nil)
    }
}

@Suite("PlacePolicy")
struct PlacePolicyTests {
    func fix(_ latitude: Double, _ longitude: Double, error: Double? = 10) -> Fix {
        Fix(latitude: latitude, longitude: longitude, mode: .threeDimensional, horizontalErrorMeters: error,
            timeSource: .systemClock, receivedAt: .now(), origin: .gps)
    }

    func result(_ fix: Fix, _ place: GeoPlace?, index: String = "test-border 1") -> LocationResult {
        LocationResult(fix: fix, place: place, source: .gps, updatedAt: .now(), indexVersion: index, generation: 1)
    }

    @Test func withoutGeocoderThereIsNoPlace() {
        var policy = PlacePolicy(stationaryDistanceMeters: 150)
        let (place, decision) = policy.place(for: fix(48, 4), previous: nil, geocoder: nil)
        #expect(place == nil)
        #expect(decision == .noGeocoder)
    }

    @Test func aFixWithinTheStationaryDistanceKeepsThePreviousPlace() {
        var policy = PlacePolicy(stationaryDistanceMeters: 150)
        let geocoder = BorderGeocoder()
        let kept = GeoPlace(countryCode: "FR", regionCode: "FR-GES", localityName: "Kept")
        let (place, decision) = policy.place(for: fix(48.0005, 4.0), previous: result(fix(48, 4), kept), geocoder: geocoder)
        #expect(decision == .stationary)
        #expect(place == kept)
        let (moved, movedDecision) = policy.place(for: fix(48.01, 4.0), previous: result(fix(48, 4), kept), geocoder: geocoder)
        #expect(movedDecision == .geocoded)
        #expect(moved?.localityName == "Ouestville")
    }

    @Test func aNewIndexIsNotHiddenByStationaryReuse() {
        var policy = PlacePolicy(stationaryDistanceMeters: 150)
        let old = result(fix(48, 4), GeoPlace(countryCode: "FR", regionCode: "FR-GES", localityName: "Old"), index: "older index")
        let (place, decision) = policy.place(for: fix(48, 4), previous: old, geocoder: BorderGeocoder())
        #expect(decision == .geocoded)
        #expect(place?.localityName == "Ouestville")
    }

    @Test("jitter across a border holds the old area until a second fix confirms the new one")
    func hysteresisWithoutMargins() {
        var policy = PlacePolicy(stationaryDistanceMeters: 150)
        let geocoder = BorderGeocoder(margins: false)
        let west = geocoder.place(latitude: 48, longitude: 4.999)
        var previous = result(fix(48, 4.999), west)
        let (held, heldDecision) = policy.place(for: fix(48, 5.003), previous: previous, geocoder: geocoder)
        #expect(heldDecision == .held)
        #expect(held?.countryCode == "FR")
        previous = result(fix(48, 5.003), held)
        let (switched, switchedDecision) = policy.place(for: fix(48, 5.006), previous: previous, geocoder: geocoder)
        #expect(switchedDecision == .switched)
        #expect(switched?.countryCode == "DE")
    }

    @Test("a fix inside the new area by more than its error switches at once")
    func marginBeyondErrorSwitchesAtOnce() {
        var policy = PlacePolicy(stationaryDistanceMeters: 150)
        let geocoder = BorderGeocoder()
        let previous = result(fix(48, 4.99), geocoder.place(latitude: 48, longitude: 4.99))
        let (near, nearDecision) = policy.place(for: fix(48, 5.002, error: 500), previous: previous, geocoder: geocoder)
        #expect(nearDecision == .held)
        #expect(near?.countryCode == "FR")
        var fresh = PlacePolicy(stationaryDistanceMeters: 150)
        let (far, farDecision) = fresh.place(for: fix(48, 5.05, error: 20), previous: previous, geocoder: geocoder)
        #expect(farDecision == .switched)
        #expect(far?.countryCode == "DE")
    }

    @Test("flapping back and forth never switches")
    func flappingNeverSwitches() {
        var policy = PlacePolicy(stationaryDistanceMeters: 0)
        let geocoder = BorderGeocoder(margins: false)
        var previous = result(fix(48, 4.999), geocoder.place(latitude: 48, longitude: 4.999))
        for step in 0..<10 {
            let longitude = step.isMultiple(of: 2) ? 5.001 : 4.998
            let (place, _) = policy.place(for: fix(48, longitude), previous: previous, geocoder: geocoder)
            #expect(place?.countryCode == "FR")
            previous = result(fix(48, longitude), place)
        }
    }
}
