import GeoAttrCore
import GeoAttrModel
@testable import GeoAttrServer
import NIOHTTP1
import Testing

/// Each endpoint as a function from a request to a response, with every status it answers.
@Suite("Endpoint responses")
struct EndpointResponseTests {
    let fixture = ServerFixture()

    // MARK: /v1/attributes

    @Test("attributes in every format: 200, content type, length and entity tag", arguments: AttributeFormat.allCases)
    func attributesInEachFormat(format: AttributeFormat) throws {
        let response = try #require(fixture.route(fixture.request(.GET, "/v1/attributes?format=\(format.rawValue)")).reply.response)
        #expect(response.status == .ok)
        #expect(response.headerList == ["content-type: \(format.mediaType)", "content-length: \(response.body.count)", "etag: \"7-exact\""])
        #expect(!response.body.isEmpty)
    }

    @Test func attributesHeadAnnouncesTheLengthAndSendsNothing() throws {
        let get = try #require(fixture.route(fixture.request(.GET, "/v1/attributes")).reply.response)
        let head = try #require(fixture.route(fixture.request(.HEAD, "/v1/attributes")).reply.response)
        #expect(head.status == .ok)
        #expect(head.headers == get.headers)
        #expect(head.body.isEmpty)
    }

    @Test func attributesAreCutToTheGrant() throws {
        let country = try #require(
            fixture.route(fixture.request(.GET, "/v1/attributes?format=env", as: ServerFixture.countryReader)).reply.response)
        #expect(country.text.contains("geo.country.iso_code") || country.text.contains("GEO_COUNTRY"))
        #expect(!country.text.contains("Berlin"))
        #expect(country.headers.first(name: "etag") == "\"7-country\"")
        let locality = try #require(fixture.route(fixture.request(.GET, "/v1/attributes", as: ServerFixture.localityReader)).reply.response)
        #expect(locality.headers.first(name: "etag") == "\"7-locality-d2\"")
        #expect(locality.text.contains("52.52"))
    }

    @Test("if-none-match: 304 with the tag for the tag and for *", arguments: ["\"7-exact\"", "*"])
    func notModified(tag: String) throws {
        let request = fixture.request(.GET, "/v1/attributes", headers: ["if-none-match": tag])
        let response = try #require(fixture.route(request).reply.response)
        #expect(response.status == .notModified)
        #expect(response.headerList == ["content-length: 0", "etag: \"7-exact\""])
        #expect(response.body.isEmpty)
    }

    @Test func aTagOfAnotherGrantIsModified() throws {
        let request = fixture.request(.GET, "/v1/attributes", as: ServerFixture.countryReader, headers: ["if-none-match": "\"7-exact\""])
        #expect(fixture.route(request).reply.response?.status == .ok)
    }

    @Test func attributesInAnUnknownFormatAreABadRequest() throws {
        let response = try #require(fixture.route(fixture.request(.GET, "/v1/attributes?format=xml")).reply.response)
        #expect(response.status == .badRequest)
        #expect(response.text == #"{"error":"bad_request","message":"format must be json, otel, env or prometheus"}"#)
        #expect(response.headerList == ["content-type: application/json", "content-length: \(response.body.count)"])
    }

    @Test func attributesWithoutALocationAreUnavailable() throws {
        let fixture = ServerFixture(served: false)
        let response = try #require(fixture.route(fixture.request(.GET, "/v1/attributes")).reply.response)
        #expect(response.status == .serviceUnavailable)
        #expect(response.text == #"{"error":"no_location","message":"no location yet: no fix, no cache and no static location"}"#)
    }

    // MARK: /v1/status

    @Test func statusShowsThePrecisionOfTheClient() throws {
        let response = try #require(fixture.route(fixture.request(.GET, "/v1/status", as: ServerFixture.countryReader)).reply.response)
        #expect(response.status == .ok)
        #expect(response.headers.first(name: "content-type") == "application/json")
        #expect(response.text.contains(#""precision":"country""#))
        #expect(response.text.contains(#""generation":7"#))
        #expect(response.text.contains(#""state":"foreground""#))
    }

    // MARK: /metrics

    @Test func metricsWithAndWithoutARegistry() throws {
        let enabled = try #require(fixture.route(fixture.request(.GET, "/metrics", as: ServerFixture.blind)).reply.response)
        #expect(enabled.status == .ok)
        #expect(enabled.headers.first(name: "content-type") == "text/plain; version=0.0.4; charset=utf-8")
        let off = ServerFixture(metrics: false)
        let disabled = try #require(off.route(off.request(.GET, "/metrics")).reply.response)
        #expect(disabled.status == .notFound)
        #expect(disabled.text == #"{"error":"not_found","message":"metrics are not enabled"}"#)
    }

    // MARK: /v1/state

    @Test("state: 200 and the scheduler told", arguments: [("background", PowerState.background), ("foreground\n", .foreground)])
    func stateChange(body: String, state: PowerState) async throws {
        let reply = fixture.route(fixture.request(.PUT, "/v1/state", as: ServerFixture.mutator, body: body)).reply
        let response = try #require(await reply.resolved())
        #expect(response.status == .ok)
        #expect(response.text == #"{"state":"\#(state.rawValue)"}"#)
        #expect(fixture.scheduler.commands == [.powerState(state, origin: "socket uid 1002")])
    }

    @Test func stateWithAnotherBodyIsABadRequest() throws {
        let response = try #require(fixture.route(fixture.request(.PUT, "/v1/state", as: ServerFixture.mutator, body: "asleep")).reply.response)
        #expect(response.status == .badRequest)
        #expect(response.text == #"{"error":"bad_request","message":"the body must be foreground or background"}"#)
        #expect(fixture.scheduler.commands.isEmpty)
    }
}
