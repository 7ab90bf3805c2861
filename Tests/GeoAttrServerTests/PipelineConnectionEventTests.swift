import GeoAttrCore
import GeoAttrModel
@testable import GeoAttrServer
import NIOCore
import Testing
import GeoAttrSettings
import TestSupport

/// A reload of the access policy and shutdown reach open connections.
@Suite("Pipeline: reloads and shutdown")
struct PipelineConnectionEventTests {
    let fixture = ServerFixture()

    /// The fixture's policy with the reader (uid 1000) cut to the country.
    static let narrowerPolicy: AccessPolicy = {
        var policy = ServerFixture.policy
        policy.rules.append(.init(subject: .uid(1000), grant: Grant(level: .country)))
        return policy
    }()

    @Test func anIdleConnectionWhoseGrantChangedCloses() throws {
        let connection = try EmbeddedConnection(fixture)
        _ = try connection.exchange("GET /v1/status HTTP/1.1\r\n\r\n")
        fixture.server.update(policy: Self.narrowerPolicy, ttl: .seconds(3600))
        #expect(!connection.isOpen)
    }

    @Test func aConnectionWhoseGrantDidNotChangeStays() throws {
        let connection = try EmbeddedConnection(fixture, as: ServerFixture.countryReader)
        _ = try connection.exchange("GET /v1/status HTTP/1.1\r\n\r\n")
        fixture.server.update(policy: Self.narrowerPolicy, ttl: .seconds(3600))
        #expect(connection.isOpen)
        let responses = try connection.exchange("GET /v1/attributes HTTP/1.1\r\n\r\n")
        #expect(responses.first?.header("etag") == "\"7-country\"")
        #expect(responses.first?.header("connection") == nil)
    }

    @Test func aRequestUnderWayIsAnsweredUnderTheNewGrantThenTheConnectionCloses() throws {
        let connection = try EmbeddedConnection(fixture)
        try connection.send("GET /v1/attributes HTTP/1.1\r\ncontent-length: 3\r\n\r\nab")
        fixture.server.update(policy: Self.narrowerPolicy, ttl: .seconds(3600))
        #expect(connection.isOpen)
        let responses = try connection.exchange("c")
        #expect(responses.first?.header("etag") == "\"7-country\"")
        #expect(responses.first?.headers.last?.name == "connection")
        #expect(!connection.isOpen)
    }

    @Test func shutdownClosesAnIdleConnection() throws {
        let connection = try EmbeddedConnection(fixture)
        _ = try connection.exchange("GET /v1/status HTTP/1.1\r\n\r\n")
        fixture.server.connections.shutDownAll()
        #expect(!connection.isOpen)
        #expect(try connection.received().isEmpty)
    }
}
