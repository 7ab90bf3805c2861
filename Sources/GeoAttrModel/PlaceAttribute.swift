public import GeoPlaces
import OTelSemanticConventions

/// A place's attributes by their OpenTelemetry names, in the order every output writes them,
/// with the precision level a client needs to see each. The one table of `geo.*` place names:
/// the daemon's documents and `geoattrctl lookup`'s JSON both write from it.
public enum PlaceAttribute: CaseIterable, Sendable {
    case country, region, locality, postalCode, continent
    /// The point's IANA time zone, under the name Elastic Common Schema gives it and OpenTelemetry's
    /// open proposal takes over; the semantic conventions have no time zone attribute yet.
    case timeZone

    /// The semantic-convention name (`geo.country.iso_code`, ...).
    public var name: String {
        switch self {
        case .country: OTelAttribute.geo.country.isoCode
        case .region: OTelAttribute.geo.region.isoCode
        case .locality: OTelAttribute.geo.locality.name
        case .postalCode: OTelAttribute.geo.postalCode
        case .continent: OTelAttribute.geo.continent.code
        case .timeZone: "geo.timezone"  // proposed: open-telemetry/semantic-conventions#2381
        }
    }

    /// The lowest precision level that shows it. A time zone names an area within its country
    /// where the country has several: `region`, unless it is its country's only one (`country`).
    public func level(in place: GeoPlace?) -> PrecisionLevel {
        switch self {
        case .country, .continent: .country
        case .region: .region
        case .locality: .locality
        case .postalCode: .postal
        case .timeZone: place?.timeZoneCoversCountry == true ? .country : .region
        }
    }

    /// Its value in `place`, `nil` when unknown.
    public func value(in place: GeoPlace) -> String? {
        switch self {
        case .country: place.countryCode
        case .region: place.regionCode
        case .locality: place.localityName
        case .postalCode: place.postalCode
        case .continent: place.continentCode
        case .timeZone: place.timeZone
        }
    }
}
