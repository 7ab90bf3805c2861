public import GeoPlaces
import OTelSemanticConventions

/// Where a served result came from.
public enum ResultSource: String, Sendable, Hashable, Codable {
    /// A fix taken from the receiver by this process.
    case gps
    /// A result loaded from the disk cache after a restart.
    case cache
    /// The configured static location.
    case `static`
}

/// The current answer: a fix and what the geocoder made of it, with provenance.
///
/// A new fix and its geocode replace the old result in one step; the old result is never
/// blanked first.
public struct LocationResult: Sendable, Hashable, Codable {
    public var fix: Fix
    /// `nil` when no index is loaded (degraded: location attributes only).
    public var place: GeoPlace?
    public var source: ResultSource
    /// The system clock when this result was made (fix accepted and geocoded).
    public var updatedAt: UTCTimestamp
    /// The geocoder index that made `place`.
    public var indexVersion: String?
    /// Grows with every change of the served result, across restarts.
    public var generation: UInt64

    public init(
        fix: Fix,
        place: GeoPlace?,
        source: ResultSource,
        updatedAt: UTCTimestamp,
        indexVersion: String?,
        generation: UInt64
    ) {
        self.fix = fix
        self.place = place
        self.source = source
        self.updatedAt = updatedAt
        self.indexVersion = indexVersion
        self.generation = generation
    }

    enum CodingKeys: String, CodingKey {
        case fix, place, source
        case updatedAt = "updated_at"
        case indexVersion = "index_version"
        case generation
    }

    /// The OpenTelemetry attributes, by their semantic-convention names. Unknown ones are absent.
    public var attributes: [String: AttributeValue] {
        var result: [String: AttributeValue] = [
            OTelAttribute.geo.location.lat: .double(fix.latitude),
            OTelAttribute.geo.location.lon: .double(fix.longitude),
        ]
        if let place {
            for attribute in PlaceAttribute.allCases {
                result[attribute.name] = attribute.value(in: place).map(AttributeValue.string)
            }
        }
        return result
    }
}

/// An attribute's value: the geo attributes are strings and doubles, encoded as such in JSON.
public enum AttributeValue: Sendable, Hashable, CustomStringConvertible {
    case string(String)
    case double(Double)

    public var description: String {
        switch self {
        case .string(let value): value
        case .double(let value): String(value)
        }
    }
}

extension AttributeValue: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let number = try? container.decode(Double.self) {
            self = .double(number)
        } else {
            self = .string(try container.decode(String.self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let value): try container.encode(value)
        case .double(let value): try container.encode(value)
        }
    }
}
