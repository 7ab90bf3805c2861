@testable import GeoAttrServer
import GeoAttrModel
import NIOCore
import Testing
import TestSupport

/// The whole pipeline on an in-memory channel: response bytes, keep-alive and closing.
@Suite("Pipeline: keep-alive and closing")
struct PipelineKeepAliveTests {
    let fixture = ServerFixture()

    static func errorBytes(_ statusLine: String, _ body: String, closing: Bool = false) -> String {
        "\(statusLine)\r\ncontent-type: application/json\r\ncontent-length: \(body.utf8.count)\r\n"
            + (closing ? "connection: close\r\n" : "") + "\r\n" + body
    }

    @Test func aKeepAliveConnectionAnswersRequestAfterRequest() throws {
        let connection = try EmbeddedConnection(fixture)
        for _ in 0..<3 {
            let responses = try connection.exchange("GET /v1/attributes?format=env HTTP/1.1\r\nhost: geoattrd\r\n\r\n")
            #expect(responses.count == 1)
            #expect(responses.first?.statusLine == "HTTP/1.1 200 OK")
            #expect(responses.first?.headers.map(\.name) == ["content-type", "content-length", "etag"])
            #expect(connection.isOpen)
        }
    }

    @Test func theBytesOfAnErrorAnswer() throws {
        let connection = try EmbeddedConnection(fixture)
        try connection.send("GET /nope HTTP/1.1\r\n\r\n")
        let body = #"{"error":"not_found","message":"no such endpoint: /nope"}"#
        #expect(try connection.received() == Self.errorBytes("HTTP/1.1 404 Not Found", body))
        #expect(connection.isOpen)
    }

    @Test("connection: close, or HTTP/1.0 without keep-alive: the answer says so and the connection closes",
          arguments: ["GET /v1/status HTTP/1.1\r\nconnection: close\r\n\r\n", "GET /v1/status HTTP/1.0\r\n\r\n"])
    func clientEndsTheConnection(request: String) throws {
        let connection = try EmbeddedConnection(fixture)
        let responses = try connection.exchange(request)
        #expect(responses.first?.status == 200)
        #expect(responses.first?.headers.last?.name == "connection")
        #expect(responses.first?.header("connection") == "close")
        #expect(!connection.isOpen)
    }

    @Test func http10WithKeepAliveStaysOpen() throws {
        let connection = try EmbeddedConnection(fixture)
        let responses = try connection.exchange("GET /v1/status HTTP/1.0\r\nconnection: keep-alive\r\n\r\n")
        #expect(responses.first?.statusLine == "HTTP/1.1 200 OK")
        #expect(responses.first?.header("connection") == nil)
        #expect(connection.isOpen)
    }

    @Test func pipelinedRequestsAreAnsweredInOrder() throws {
        let connection = try EmbeddedConnection(fixture)
        let responses = try connection.exchange(
            "GET /v1/attributes HTTP/1.1\r\n\r\nGET /nope HTTP/1.1\r\n\r\nHEAD /v1/attributes HTTP/1.1\r\nif-none-match: \"7-exact\"\r\n\r\n"
                + "GET /metrics HTTP/1.1\r\nconnection: close\r\n\r\n")
        #expect(responses.map(\.status) == [200, 404, 304, 200])
        // NIO's encoder drops the length of a 304, which has no body.
        #expect(responses[2].headers.map(\.name) == ["etag"])
        #expect(responses[3].header("connection") == "close")
        #expect(!connection.isOpen)
    }

    @Test func aHeadRequestGetsTheLengthButNoBody() throws {
        let connection = try EmbeddedConnection(fixture)
        try connection.send("HEAD /v1/attributes HTTP/1.1\r\n\r\n")
        let text = try connection.received()
        #expect(text.hasPrefix("HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: "))
        #expect(text.hasSuffix("\"7-exact\"\r\n\r\n"))
    }

    @Test func everyAccessLevelOverTheWire() throws {
        let expectations: [(PeerIdentity, String, Int)] = [
            (ServerFixture.blind, "GET /v1/attributes", 403), (ServerFixture.blind, "GET /metrics", 200),
            (ServerFixture.reader, "POST /v1/refresh", 403), (ServerFixture.reader, "GET /v1/status", 200),
            (ServerFixture.countryReader, "GET /v1/attributes", 200), (ServerFixture.mutator, "PUT /v1/state", 400),
        ]
        for (peer, request, status) in expectations {
            let connection = try EmbeddedConnection(fixture, as: peer)
            #expect(try connection.exchange("\(request) HTTP/1.1\r\ncontent-length: 0\r\n\r\n").map(\.status) == [status])
        }
    }

    @Test func aConnectionLeavesTheRegistryWhenItCloses() throws {
        let connection = try EmbeddedConnection(fixture)
        #expect(fixture.server.connections.count == 1)
        _ = try connection.exchange("GET /v1/status HTTP/1.1\r\nconnection: close\r\n\r\n")
        #expect(fixture.server.connections.count == 0)
    }
}
