import GeoAttrCore
import GeoAttrModel
@testable import GeoAttrServer
import NIOCore
import Testing
import TestSupport
import GeoAttrSettings

/// Refresh, state and watch through the whole pipeline, with the recording scheduler.
@Suite("Pipeline: refresh, state and watch")
struct PipelineDeferredTests {
    @Test func aRefreshIsAcceptedAndTheConnectionStaysOpen() async throws {
        let fixture = ServerFixture()
        let connection = try await AsyncConnection(fixture)
        try await connection.send("POST /v1/refresh HTTP/1.1\r\ncontent-length: 0\r\n\r\n")
        let responses = try await connection.responses(1)
        #expect(responses.first?.description == PipelineKeepAliveTests.errorBytes("HTTP/1.1 202 Accepted", #"{"refresh":"started"}"#))
        #expect(connection.isOpen)
        #expect(fixture.scheduler.commands == [.refresh(origin: "socket uid 1002", waits: false)])
        #expect(fixture.server.refreshWaits.count == 0)
        await connection.close()
    }

    @Test func aStateChangeIsAnsweredOnceApplied() async throws {
        let fixture = ServerFixture()
        let connection = try await AsyncConnection(fixture)
        try await connection.send("PUT /v1/state HTTP/1.1\r\ncontent-length: 10\r\n\r\nbackground")
        let responses = try await connection.responses(1)
        #expect(responses.first?.status == 200)
        #expect(responses.first?.body == #"{"state":"background"}"#)
        #expect(fixture.scheduler.commands == [.powerState(.background, origin: "socket uid 1002")])
        await connection.close()
    }

    @Test func aRequestPipelinedBehindAnAnswerThatWaitsIsAnsweredAfterIt() async throws {
        let fixture = ServerFixture()
        let connection = try await AsyncConnection(fixture)
        try await connection.send(
            "PUT /v1/state HTTP/1.1\r\ncontent-length: 10\r\n\r\nbackgroundGET /v1/attributes?format=env HTTP/1.1\r\n\r\n")
        let responses = try await connection.responses(2)
        #expect(responses.map(\.status) == [200, 200])
        #expect(responses.first?.body == #"{"state":"background"}"#)
        #expect(responses.last?.body.hasPrefix("GEO_") == true)
        #expect(connection.isOpen)
        await connection.close()
    }

    @Test func noRequestPipelinedBehindAnAnswerThatClosesIsAnswered() async throws {
        let fixture = ServerFixture()
        let connection = try await AsyncConnection(fixture)
        try await connection.send(
            "PUT /v1/state HTTP/1.1\r\ncontent-length: 10\r\nconnection: close\r\n\r\nbackgroundGET /v1/status HTTP/1.1\r\n\r\n")
        try await connection.waitUntilClosed()
        let responses = RawHTTPResponse.all(in: try await connection.unread(), receivedAll: true)
        #expect(responses.map(\.status) == [200])
        #expect(responses.first?.body == #"{"state":"background"}"#)
    }

    @Test func shutdownAnswersARefreshThatWaitsAndCloses() async throws {
        // The attempt never ends: only shutdown can answer.
        let fixture = ServerFixture(scheduler: RecordingScheduler(outcome: .accepted, result: nil))
        let connection = try await AsyncConnection(fixture)
        try await connection.send("POST /v1/refresh?wait=60 HTTP/1.1\r\ncontent-length: 0\r\n\r\n")
        #expect(await eventually { !fixture.scheduler.commands.isEmpty })
        fixture.server.connections.shutDownAll()
        fixture.server.refreshWaits.finishAll()
        let responses = try await connection.responses(1)
        #expect(responses.first?.status == 503)
        #expect(responses.first?.body == #"{"error":"shutting_down","message":"geoattrd is shutting down; retry when it is back"}"#)
        #expect(responses.first?.headers.last?.name == "connection")
        try await connection.waitUntilClosed()
        await fixture.server.refreshWaits.waitUntilNone(timeout: .seconds(5))
        #expect(fixture.server.refreshWaits.count == 0)
    }

    @Test func aWatchStreamsTheAttributesAndEndsAtShutdown() async throws {
        let fixture = ServerFixture()
        let connection = try await AsyncConnection(fixture, as: ServerFixture.countryReader)
        try await connection.send("GET /v1/watch HTTP/1.1\r\n\r\n")
        let start = try await connection.receive { $0.contains("data: {") && $0.hasSuffix("\n\n\r\n") }
        #expect(start.hasPrefix("HTTP/1.1 200 OK\r\ncontent-type: text/event-stream; charset=utf-8\r\ncache-control: no-cache\r\ntransfer-encoding: chunked\r\n\r\n"))
        // The reconnection delay first, then the current state.
        #expect(start.contains("\r\nretry: 1000\n\n\r\n"))
        #expect(start.contains("id: 7\nevent: attributes\ndata: {"))
        #expect(start.contains(#""precision":"country""#))
        fixture.server.connections.shutDownAll()
        let end = try await connection.receive { $0.hasSuffix("0\r\n\r\n") }
        #expect(end == "0\r\n\r\n")
        try await connection.waitUntilClosed()
    }

    /// The reader watching, its first event received.
    static func readerWatching() async throws -> (ServerFixture, AsyncConnection) {
        let fixture = ServerFixture()
        let connection = try await AsyncConnection(fixture, as: ServerFixture.reader)
        try await connection.send("GET /v1/watch HTTP/1.1\r\n\r\n")
        _ = try await connection.receive { $0.contains("data: {") && $0.hasSuffix("\n\n\r\n") }
        return (fixture, connection)
    }

    @Test("a reload that changes the client's grant ends its watch with a reconnect event that resets the last event id")
    func aGrantChangeEndsTheWatchWithReconnect() async throws {
        // The reader, whom the narrower policy cuts to the country.
        let (fixture, connection) = try await Self.readerWatching()
        fixture.server.update(policy: PipelineConnectionEventTests.narrowerPolicy, ttl: .seconds(3600))
        let end = try await connection.receive { $0.hasSuffix("0\r\n\r\n") }
        #expect(end.ranges(of: "event: reconnect").count == 1, "\(end)")
        #expect(end.contains("id:\nevent: reconnect\ndata: {\"reason\":\"access_changed\"}\n\n"), "\(end)")
        #expect(!end.contains("event: attributes"), "\(end)")
        try await connection.waitUntilClosed()
    }

    @Test("a change of access.mutate alone leaves a watch streaming")
    func aMutateOnlyChangeKeepsTheWatch() async throws {
        let (fixture, connection) = try await Self.readerWatching()
        var mutating = ServerFixture.policy
        mutating.mutators.append(.uid(ServerFixture.reader.uid))
        fixture.server.update(policy: mutating, ttl: .seconds(3600))
        var next = ServerFixture.result
        next.generation = 8
        fixture.store.publish(ServedResult(result: next, obtainedAt: .now))
        let events = try await connection.receive { $0.contains("id: 8\n") && $0.hasSuffix("\n\n\r\n") }
        #expect(!events.contains("reconnect"), "\(events)")
        await connection.close()
    }

    @Test("a reconnect with Last-Event-ID at the current generation gets no duplicate, only what follows")
    func aReconnectAtTheCurrentGenerationGetsNoDuplicate() async throws {
        let fixture = ServerFixture()
        let connection = try await AsyncConnection(fixture)
        try await connection.send("GET /v1/watch HTTP/1.1\r\nlast-event-id: 7\r\n\r\n")
        _ = try await connection.receive { $0.contains("retry: 1000\n\n\r\n") }
        var next = ServerFixture.result
        next.generation = 8
        fixture.store.publish(ServedResult(result: next, obtainedAt: .now))
        let events = try await connection.receive { $0.contains("data: {") && $0.hasSuffix("\n\n\r\n") }
        #expect(!events.contains("id: 7\n"), "\(events)")
        #expect(events.contains("id: 8\nevent: attributes\ndata: {"))
        await connection.close()
    }

    @Test("a reconnect with an older, newer or unparsable Last-Event-ID gets the current state at once", arguments: ["6", "9", "x", ""])
    func aReconnectElsewhereGetsTheCurrentState(lastEventID: String) async throws {
        let fixture = ServerFixture()
        let connection = try await AsyncConnection(fixture)
        try await connection.send("GET /v1/watch HTTP/1.1\r\nlast-event-id: \(lastEventID)\r\n\r\n")
        let start = try await connection.receive { $0.contains("data: {") && $0.hasSuffix("\n\n\r\n") }
        #expect(start.contains("id: 7\nevent: attributes\ndata: {"))
        await connection.close()
    }

    @Test func aRequestAfterAWatchClosesTheConnection() async throws {
        let fixture = ServerFixture()
        let connection = try await AsyncConnection(fixture)
        try await connection.send("GET /v1/watch HTTP/1.1\r\n\r\n")
        _ = try await connection.receive { $0.contains("\n\n\r\n") }
        try await connection.send("GET /v1/status HTTP/1.1\r\n\r\n")
        try await connection.waitUntilClosed()
        #expect(!connection.isOpen)
    }

    @Test func anUnparseableRequestAfterAWatchClosesWithoutAnAnswer() async throws {
        let fixture = ServerFixture()
        let connection = try await AsyncConnection(fixture)
        try await connection.send("GET /v1/watch HTTP/1.1\r\n\r\n")
        _ = try await connection.receive { $0.contains("\n\n\r\n") }
        try await connection.send("GARBAGE\r\n\r\n")
        try await connection.waitUntilClosed()
        #expect(try await !connection.unread().contains("HTTP/1.1 400"))
    }

    @Test func theBlindMayNotWatch() async throws {
        let fixture = ServerFixture()
        let connection = try await AsyncConnection(fixture, as: ServerFixture.blind)
        try await connection.send("GET /v1/watch HTTP/1.1\r\n\r\n")
        #expect(try await connection.responses(1).first?.status == 403)
        await connection.close()
    }
}
