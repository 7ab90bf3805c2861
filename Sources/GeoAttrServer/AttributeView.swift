public import GeoAttrCore
public import GeoAttrModel
import OTelSemanticConventions

/// What one client may see of the served result: the attributes cut to its precision level,
/// in every format. Everything a client receives passes through here, so a client entitled to
/// `country` never sees more, through any endpoint or format.
public struct AttributeView: Sendable {
    public var attributes: [String: AttributeValue]
    public var served: ServedResult
    public var grant: Grant
    public var stale: Bool
    public var ageSeconds: Int64
    public var state: PowerState

    public init(served: ServedResult, grant: Grant, ttl: Duration, state: PowerState, now: ContinuousClock.Instant = .now) {
        self.served = served
        self.grant = grant
        let age = served.age(at: now)
        ageSeconds = age.components.seconds
        stale = age >= ttl
        self.state = state
        attributes = Self.filter(served.result, grant: grant)
    }

    /// The view as the formats take it (`AttributeFormat.render`).
    public var answer: AttributesAnswer {
        let result = served.result
        let document = AttributesDocument(
            attributes: attributes,
            fixTime: result.fix.time.iso8601,
            updatedAt: result.updatedAt.iso8601,
            ageS: ageSeconds,
            stale: stale,
            state: state.rawValue,
            source: result.source.rawValue,
            generation: result.generation,
            precision: grant.level.rawValue,
            errorM: grant.level == .exact ? result.fix.horizontalErrorMeters : nil,
            indexVersion: result.indexVersion)
        return AttributesAnswer(document: document, updatedAtSeconds: result.updatedAt.seconds)
    }

    /// The attributes a grant allows. Coordinates only at `exact`, or rounded for the levels
    /// between `exact` and `country` when the grant says so.
    public static func filter(_ result: LocationResult, grant: Grant) -> [String: AttributeValue] {
        var all = result.attributes
        let level = grant.level
        let lat = OTelAttribute.geo.location.lat
        let lon = OTelAttribute.geo.location.lon
        if level < .exact {
            all.removeValue(forKey: lat)
            all.removeValue(forKey: lon)
            if level > .country, let decimals = grant.coordinateDecimals {
                all[lat] = .double(round(result.fix.latitude, decimals: decimals))
                all[lon] = .double(round(result.fix.longitude, decimals: decimals))
            }
        }
        for attribute in PlaceAttribute.allCases where level < attribute.level(in: result.place) {
            all.removeValue(forKey: attribute.name)
        }
        return all
    }

    static func round(_ value: Double, decimals: Int) -> Double {
        var scale = 1.0
        for _ in 0..<max(0, min(decimals, 9)) { scale *= 10 }
        return (value * scale).rounded() / scale
    }
}
