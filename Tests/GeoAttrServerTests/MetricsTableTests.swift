@testable import GeoAttrServer
import NIOHTTP1
import Testing
import TestSupport

/// The metrics socket's endpoint table through the whole pipeline: `/metrics` answered as the
/// API answers it, every other request 404 whoever sends it, and nothing reaches the scheduler.
@Suite("Metrics socket's table")
struct MetricsTableTests {
    static let peers = [ServerFixture.blind, ServerFixture.reader, ServerFixture.mutator]
    /// Every request the API answers but HEAD (whose answer has no body to compare), and a path it
    /// does not have.
    static let requests: [(method: HTTPMethod, target: String, body: String)] =
        EndpointTable.endpoints.filter { $0.path != "/metrics" && $0.method != .HEAD }
            .map { ($0.method, $0.path, $0.path == "/v1/state" ? "background" : "") }
        + [(.GET, "/v1/attributes?format=prometheus", ""), (.POST, "/v1/refresh?wait=5", ""), (.GET, "/v2/nothing", "")]

    static func requestText(_ method: HTTPMethod, _ target: String, body: String) -> String {
        "\(method) \(target) HTTP/1.1\r\nhost: geoattrd\r\ncontent-length: \(body.utf8.count)\r\n\r\n\(body)"
    }

    @Test("the table is the API's /metrics row, the same row")
    func theAPIsRow() throws {
        let row = try #require(EndpointTable.metricsOnly.first)
        #expect(EndpointTable.metricsOnly.count == 1)
        #expect(row.method == .GET && row.path == "/metrics" && row.name == "metrics" && row.access == .anyone)
    }

    @Test("every other request is 404, for a client with no access, a reader and a mutator", arguments: peers.indices)
    func everythingElseIsNotFound(peerIndex: Int) throws {
        let fixture = ServerFixture()
        let connection = try EmbeddedConnection(fixture, as: Self.peers[peerIndex], table: EndpointTable.metricsOnly)
        for (method, target, body) in Self.requests {
            let responses = try connection.exchange(Self.requestText(method, target, body: body))
            let path = target.split(separator: "?").first.map(String.init) ?? target
            #expect(responses.map(\.status) == [404], "\(method) \(target)")
            #expect(responses.first?.body == #"{"error":"not_found","message":"no such endpoint: \#(path)"}"#, "\(method) \(target)")
        }
        #expect(connection.isOpen)
        #expect(fixture.scheduler.commands.isEmpty, "a request reached the scheduler")
        let head = try EmbeddedConnection(fixture, as: Self.peers[peerIndex], table: EndpointTable.metricsOnly)
        try head.send(Self.requestText(.HEAD, "/v1/attributes", body: ""))
        #expect(try head.received().hasPrefix("HTTP/1.1 404 Not Found\r\n"))
    }

    @Test("GET /metrics: the API's answer, to every client", arguments: peers.indices)
    func metricsAnswered(peerIndex: Int) throws {
        let fixture = ServerFixture()
        let peer = Self.peers[peerIndex]
        let onMetricsSocket = try EmbeddedConnection(fixture, as: peer, table: EndpointTable.metricsOnly)
            .exchange(Self.requestText(.GET, "/metrics", body: ""))
        let onAPISocket = try EmbeddedConnection(fixture, as: peer).exchange(Self.requestText(.GET, "/metrics", body: ""))
        #expect(onMetricsSocket.map(\.status) == [200])
        #expect(onMetricsSocket.first?.header("content-type") == MetricsEndpoint.contentType)
        #expect(onMetricsSocket.first?.body.contains("geoattrd_build_info{") == true)
        #expect(onMetricsSocket.first?.headers.map(\.name) == onAPISocket.first?.headers.map(\.name))
        // Another method: 405 naming GET, as on the API's socket.
        let deleted = try EmbeddedConnection(fixture, as: peer, table: EndpointTable.metricsOnly)
            .exchange(Self.requestText(.DELETE, "/metrics", body: ""))
        #expect(deleted.map(\.status) == [405])
        #expect(deleted.first?.header("allow") == "GET")
    }
}
