import GeoPlaces
import GeoAttrCore
import GeoAttrModel
import GeoAttrServer
import Testing
import GeoAttrSettings

@Suite("Precision and formats")
struct AttributeViewTests {
    static let result = LocationResult(
        fix: Fix(latitude: 52.5162746, longitude: 13.3777041, mode: .threeDimensional, horizontalErrorMeters: 12,
                 timeSource: .receiver, receivedAt: UTCTimestamp(seconds: 1_795_000_000), origin: .gps),
        place: GeoPlace(countryCode: "DE", regionCode: "DE-BE", localityName: "Berlin", postalCode: "10117", continentCode: "EU"),
        source: .gps, updatedAt: UTCTimestamp(seconds: 1_795_000_000), indexVersion: "test", generation: 7)

    func keys(_ level: PrecisionLevel, decimals: Int? = nil) -> Set<String> {
        Set(AttributeView.filter(Self.result, grant: Grant(level: level, coordinateDecimals: decimals)).keys)
    }

    @Test func eachLevelSeesOnlyWhatItIsEntitledTo() {
        let all: Set = [
            "geo.location.lat", "geo.location.lon", "geo.country.iso_code", "geo.region.iso_code", "geo.locality.name",
            "geo.postal_code", "geo.continent.code",
        ]
        #expect(keys(.exact) == all)
        #expect(keys(.postal) == all.subtracting(["geo.location.lat", "geo.location.lon"]))
        #expect(keys(.locality) == ["geo.country.iso_code", "geo.region.iso_code", "geo.locality.name", "geo.continent.code"])
        #expect(keys(.region) == ["geo.country.iso_code", "geo.region.iso_code", "geo.continent.code"])
        #expect(keys(.country) == ["geo.country.iso_code", "geo.continent.code"])
        #expect(keys(.none).isEmpty)
        // Rounded coordinates only between exact and country, and never for country.
        #expect(keys(.country, decimals: 2) == ["geo.country.iso_code", "geo.continent.code"])
        let rounded = AttributeView.filter(Self.result, grant: Grant(level: .locality, coordinateDecimals: 2))
        #expect(rounded["geo.location.lat"] == .double(52.52))
        #expect(rounded["geo.location.lon"] == .double(13.38))
    }

    @Test("the time zone is a region's secret, unless it is the country's only one")
    func timeZoneLevel() {
        var result = Self.result
        result.place?.timeZone = "Europe/Berlin"
        let grant = { (level: PrecisionLevel) in Grant(level: level) }
        // Germany's only zone tells no more than the country does.
        result.place?.timeZoneCoversCountry = true
        #expect(AttributeView.filter(result, grant: grant(.country))["geo.timezone"] == .string("Europe/Berlin"))
        #expect(AttributeView.filter(result, grant: grant(.none))["geo.timezone"] == nil)
        // One of several zones names a part of the country.
        result.place?.timeZone = "America/Denver"
        result.place?.timeZoneCoversCountry = nil
        #expect(AttributeView.filter(result, grant: grant(.country))["geo.timezone"] == nil)
        #expect(AttributeView.filter(result, grant: grant(.region))["geo.timezone"] == .string("America/Denver"))
        let view = AttributeView(served: ServedResult(result: result, obtainedAt: .now), grant: grant(.region), ttl: .seconds(60), state: .foreground)
        #expect(String(decoding: AttributeFormat.otel.render(view.answer), as: UTF8.self).contains("geo.timezone=America%2FDenver"))
        #expect(String(decoding: AttributeFormat.env.render(view.answer), as: UTF8.self).contains("GEO_TIMEZONE=\"America/Denver\""))
        #expect(PrometheusLocation.text(view.answer).contains("geo_timezone=\"America/Denver\""))
    }

    @Test("a country client never sees more, in any format")
    func countryClientInEveryFormat() {
        let served = ServedResult(result: Self.result, obtainedAt: .now)
        let view = AttributeView(served: served, grant: Grant(level: .country), ttl: .seconds(3600), state: .foreground)
        for format in AttributeFormat.allCases {
            let text = String(decoding: format.render(view.answer), as: UTF8.self)
            for secret in ["52.5", "13.3", "Berlin", "10117", "DE-BE", "\"error_m\""] {
                #expect(!text.contains(secret), "\(format) leaks \(secret): \(text)")
            }
            #expect(text.contains("DE"))
        }
    }

    @Test func otelValuesArePercentEncoded() {
        let text = OTelResourceAttributes.text(["geo.locality.name": .string("Saint-Étienne, a=b%"), "geo.country.iso_code": .string("FR")])
        #expect(text == "geo.country.iso_code=FR,geo.locality.name=Saint-%C3%89tienne%2C%20a%3Db%25")
    }

    @Test func envLinesAreSafeForShellAndSystemd() {
        let text = GeoVariables.text(["geo.locality.name": .string("Quote\" $HOME `x` back\\slash"), "geo.postal_code": .string("1000")])
        #expect(text == "GEO_LOCALITY_NAME=\"Quote\\\" \\$HOME \\`x\\` back\\\\slash\"\nGEO_POSTAL_CODE=\"1000\"\n")
    }

    @Test func prometheusLabelsAreEscaped() {
        var result = Self.result
        result.place?.localityName = "A \"quoted\"\\name"
        let view = AttributeView(served: ServedResult(result: result, obtainedAt: .now), grant: Grant(level: .locality), ttl: .seconds(60), state: .foreground)
        let text = PrometheusLocation.text(view.answer)
        #expect(text.contains("geo_locality_name=\"A \\\"quoted\\\"\\\\name\""))
        #expect(text.contains("geoattrd_location_info{"))
    }

    @Test func accessPolicyRules() throws {
        let policy = AccessPolicy(
            rules: [try AccessPolicy.parseRule("uid:1001=country"), try AccessPolicy.parseRule("gid:2000=locality/2")],
            defaultGrant: Grant(level: .none), mutators: [try AccessPolicy.parseSubject("gid:27")], daemonUID: 500)
        #expect(policy.grant(uid: 1001, groups: [2000]).level == .country)
        #expect(policy.grant(uid: 1002, groups: [2000]) == Grant(level: .locality, coordinateDecimals: 2))
        #expect(policy.grant(uid: 1003, groups: [1003]).level == .none)
        #expect(policy.grant(uid: 1003, groups: [27]).mayMutate)
        #expect(!policy.grant(uid: 1001, groups: [2000]).mayMutate)
        #expect(policy.grant(uid: 0, groups: [0]) == Grant(level: .exact, mayMutate: true))
        #expect(policy.grant(uid: 500, groups: [500]) == Grant(level: .exact, mayMutate: true))
        for bad in ["uid:x=country", "user:1=exact", "uid:1=everything", "uid:1", "gid:2=region/11"] {
            #expect(throws: AccessPolicy.ParseError.self) { try AccessPolicy.parseRule(bad) }
        }
    }
}
