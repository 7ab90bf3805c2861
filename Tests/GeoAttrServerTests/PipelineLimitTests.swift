@testable import GeoAttrServer
import NIOCore
import Testing
import GeoAttrSettings
import TestSupport

/// Limits, unparseable requests, admission and deadlines, through the whole pipeline.
@Suite("Pipeline: limits, errors, admission and deadlines")
struct PipelineLimitTests {
    let fixture = ServerFixture()

    @Test func aHeadOverTheLimitIs431AndCloses() throws {
        let connection = try EmbeddedConnection(fixture)
        try connection.send("GET /v1/status HTTP/1.1\r\nx-padding: \(String(repeating: "p", count: 9000))\r\n\r\n")
        let body = #"{"error":"headers_too_large","message":"request head larger than 8192 bytes"}"#
        #expect(try connection.received() == PipelineKeepAliveTests.errorBytes("HTTP/1.1 431 Request Header Fields Too Large", body, closing: true))
        #expect(!connection.isOpen)
    }

    @Test("unparseable requests: 400 and close", arguments: ["GARBAGE\r\n\r\n", "GET / HTTP/1.1\r\nno colon here\r\n\r\n", "GET /v1/status HTTP/1.1\r\ncontent-length: x\r\n\r\n"])
    func malformed(request: String) throws {
        let connection = try EmbeddedConnection(fixture)
        try connection.send(request)
        let body = #"{"error":"bad_request","message":"malformed HTTP request"}"#
        #expect(try connection.received() == PipelineKeepAliveTests.errorBytes("HTTP/1.1 400 Bad Request", body, closing: true))
        #expect(!connection.isOpen)
    }

    @Test func aBadRequestAfterAGoodOneStillGetsItsAnswer() throws {
        let connection = try EmbeddedConnection(fixture)
        let responses = try connection.exchange("GET /v1/status HTTP/1.1\r\n\r\nGARBAGE\r\n\r\n")
        #expect(responses.map(\.status) == [200, 400])
        #expect(!connection.isOpen)
    }

    @Test func aBodyOverTheLimitIs413AndCloses() throws {
        let connection = try EmbeddedConnection(fixture, as: ServerFixture.mutator)
        let body = String(repeating: "b", count: 1025)
        let responses = try connection.exchange("PUT /v1/state HTTP/1.1\r\ncontent-length: 1025\r\n\r\n\(body)")
        #expect(responses.first?.status == 413)
        #expect(responses.first?.body == #"{"error":"body_too_large","message":"request body larger than 1024 bytes"}"#)
        #expect(responses.first?.header("connection") == "close")
        #expect(!connection.isOpen)
        #expect(fixture.scheduler.commands.isEmpty)
    }

    @Test func aRequestTargetOverTheLimitIs431() throws {
        // The decoder counts the target in the head: it refuses it before the router sees it.
        var limits = ServerLimits()
        limits.maximumHeadBytes = 100
        let fixture = ServerFixture(limits: limits)
        let connection = try EmbeddedConnection(fixture)
        let responses = try connection.exchange("GET /v1/attributes?\(String(repeating: "q", count: 100)) HTTP/1.1\r\n\r\n")
        #expect(responses.first?.status == 431)
        #expect(responses.first?.body == #"{"error":"headers_too_large","message":"request head larger than 100 bytes"}"#)
        #expect(!connection.isOpen)
    }

    @Test("query strings: odd pieces are names, unknown names are ignored",
          arguments: [("?format=env&x&==", 200), ("?=", 200), ("?&&=&", 200), ("?format=", 400), ("?format=ENV", 400)])
    func queries(query: String, status: Int) throws {
        let connection = try EmbeddedConnection(fixture)
        #expect(try connection.exchange("GET /v1/attributes\(query) HTTP/1.1\r\n\r\n").map(\.status) == [status])
    }

    // MARK: Admission

    @Test func overTheConnectionLimitA503ThenClose() throws {
        var limits = ServerLimits()
        limits.maximumConnections = 0
        let connection = try EmbeddedConnection(ServerFixture(limits: limits))
        let body = #"{"error":"too_many_connections","message":"too many connections; retry shortly"}"#
        #expect(
            try connection.received()
                == "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nconnection: close\r\ncontent-length: \(body.utf8.count)\r\n\r\n\(body)")
        #expect(!connection.isOpen)
    }

    @Test func overTheLimitOfAUIDA503ButRootGetsIn() throws {
        var limits = ServerLimits()
        limits.maximumConnectionsPerUID = 1
        let fixture = ServerFixture(limits: limits)
        let first = try EmbeddedConnection(fixture)
        let second = try EmbeddedConnection(fixture)
        let refused = RawHTTPResponse.all(in: try second.received(), receivedAll: true)
        #expect(refused.first?.status == 503)
        #expect(refused.first?.body.contains("uid 1000 holds too many connections (api.max_connections_per_uid)") == true)
        let root = try EmbeddedConnection(fixture, as: PeerIdentity(uid: 0, gid: 0, groups: [0]))
        #expect(try root.exchange("GET /v1/status HTTP/1.1\r\n\r\n").map(\.status) == [200])
        #expect(first.isOpen)
    }

    @Test func whileShuttingDownA503() throws {
        fixture.server.connections.shutDownAll()
        let connection = try EmbeddedConnection(fixture)
        let refused = RawHTTPResponse.all(in: try connection.received(), receivedAll: true)
        #expect(refused.first?.body == #"{"error":"shutting_down","message":"geoattrd is shutting down"}"#)
    }

    // MARK: Deadlines

    @Test func aFirstRequestThatNeverComesClosesAtTheHeadTimeout() throws {
        let connection = try EmbeddedConnection(fixture)
        connection.advanceTime(by: .milliseconds(9_999))
        #expect(connection.isOpen)
        connection.advanceTime(by: .milliseconds(1))
        #expect(!connection.isOpen)
        #expect(try connection.received().isEmpty)
    }

    @Test func aHeadThatTricklesClosesAtTheHeadTimeout() throws {
        let connection = try EmbeddedConnection(fixture)
        try connection.send("GET /v1/sta")
        connection.advanceTime(by: .seconds(9))
        try connection.send("tus HTTP/1.1\r\n")
        #expect(connection.isOpen)
        connection.advanceTime(by: .seconds(1))
        #expect(!connection.isOpen)
    }

    @Test func aBodyThatNeverComesClosesAtTheHeadTimeout() throws {
        let connection = try EmbeddedConnection(fixture, as: ServerFixture.mutator)
        try connection.send("PUT /v1/state HTTP/1.1\r\ncontent-length: 10\r\n\r\nback")
        connection.advanceTime(by: .seconds(10))
        #expect(!connection.isOpen)
    }

    @Test func anIdleKeepAliveConnectionClosesAtTheIdleTimeout() throws {
        let connection = try EmbeddedConnection(fixture)
        _ = try connection.exchange("GET /v1/status HTTP/1.1\r\n\r\n")
        connection.advanceTime(by: .seconds(59))
        #expect(connection.isOpen)
        // A request moves the deadline.
        _ = try connection.exchange("GET /v1/status HTTP/1.1\r\n\r\n")
        connection.advanceTime(by: .seconds(59))
        #expect(connection.isOpen)
        connection.advanceTime(by: .seconds(1))
        #expect(!connection.isOpen)
    }
}
