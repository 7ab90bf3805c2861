/// The geo attributes of one point, from the index to every answer the daemon and the CLI give.
/// A field is nil when it cannot be known (at sea, no data, implausibly far): never an empty
/// string and never a guess across a border. Encoded (the cache file, the API's `place`) with
/// short keys.
public struct GeoPlace: Sendable, Hashable, Codable {
    /// `geo.country.iso_code`: ISO 3166-1 alpha-2 (plus `XK` for Kosovo, as GeoNames uses).
    public var countryCode: String?
    /// `geo.region.iso_code`: full ISO 3166-2 code of the first-level subdivision, e.g. `US-CA`.
    public var regionCode: String?
    /// `geo.locality.name`: the city or town a person would name for the spot.
    public var localityName: String?
    /// `geo.postal_code`: nearest same-country postal-code centroid within the country's cut-off.
    public var postalCode: String?
    /// `geo.continent.code`: AF, AN, AS, EU, NA, OC or SA (GeoNames convention).
    public var continentCode: String?
    /// `geo.timezone` (a proposed name, not yet in the semantic conventions): the IANA time zone
    /// of the point, e.g. `Europe/Paris`.
    public var timeZone: String?
    /// `true` when `timeZone` is the only zone of the point's country, so that it tells no more
    /// than the country does; `nil` otherwise.
    public var timeZoneCoversCountry: Bool?
    /// Distance from the point to the edge of its region (or of its country when there is no
    /// region). Where the edge is further than the index resolves, this is a lower bound, which is
    /// what hysteresis needs: the answer cannot change before the point has moved this far.
    public var boundaryMarginMeters: Double?

    public init(
        countryCode: String? = nil, regionCode: String? = nil, localityName: String? = nil,
        postalCode: String? = nil, continentCode: String? = nil, boundaryMarginMeters: Double? = nil,
        timeZone: String? = nil, timeZoneCoversCountry: Bool? = nil
    ) {
        self.countryCode = countryCode
        self.regionCode = regionCode
        self.localityName = localityName
        self.postalCode = postalCode
        self.continentCode = continentCode
        self.boundaryMarginMeters = boundaryMarginMeters
        self.timeZone = timeZone
        self.timeZoneCoversCountry = timeZoneCoversCountry
    }

    /// The place with nothing known, returned for invalid input and open sea.
    public static let empty = GeoPlace()

    enum CodingKeys: String, CodingKey {
        case countryCode = "country"
        case regionCode = "region"
        case localityName = "locality"
        case postalCode = "postal_code"
        case continentCode = "continent"
        case boundaryMarginMeters = "boundary_margin_m"
        case timeZone = "timezone"
        case timeZoneCoversCountry = "timezone_country"
    }

    /// Whether two answers name the same country, region and time zone (what hysteresis guards:
    /// the margin measures the edges of all three).
    public func sameArea(as other: GeoPlace) -> Bool {
        countryCode == other.countryCode && regionCode == other.regionCode && timeZone == other.timeZone
    }
}
