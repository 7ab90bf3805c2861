/// What the offline geocoder says about a position. A field that cannot be known is `nil`:
/// never an empty string, never a guess across a border.
public struct Place: Sendable, Hashable, Codable {
    /// ISO 3166-1 alpha-2, `geo.country.iso_code`.
    public var countryCode: String?
    /// Full ISO 3166-2 code (`US-CA`), `geo.region.iso_code`.
    public var regionCode: String?
    /// `geo.locality.name`.
    public var localityName: String?
    /// `geo.postal_code`.
    public var postalCode: String?
    /// Two-letter continent code, `geo.continent.code`.
    public var continentCode: String?
    /// How far the position lies inside its region (or country, without regions), in metres,
    /// when the geocoder knows: lets a consumer tell a confident answer from one at a border.
    public var boundaryMarginMeters: Double?

    public init(
        countryCode: String? = nil,
        regionCode: String? = nil,
        localityName: String? = nil,
        postalCode: String? = nil,
        continentCode: String? = nil,
        boundaryMarginMeters: Double? = nil
    ) {
        self.countryCode = countryCode
        self.regionCode = regionCode
        self.localityName = localityName
        self.postalCode = postalCode
        self.continentCode = continentCode
        self.boundaryMarginMeters = boundaryMarginMeters
    }

    enum CodingKeys: String, CodingKey {
        case countryCode = "country"
        case regionCode = "region"
        case localityName = "locality"
        case postalCode = "postal_code"
        case continentCode = "continent"
        case boundaryMarginMeters = "boundary_margin_m"
    }

    /// Whether two answers name the same country and region (what hysteresis guards).
    public func sameArea(as other: Place) -> Bool {
        countryCode == other.countryCode && regionCode == other.regionCode
    }
}
