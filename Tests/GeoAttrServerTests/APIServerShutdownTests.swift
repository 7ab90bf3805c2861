import GeoAttrCore
import GeoAttrModel
import GeoAttrServer
import GeoAttrSettings
import Logging
import ServiceLifecycleTestKit
import Testing
import TestSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The API on a real Unix socket, run as a service of a ServiceGroup and shut down gracefully,
/// as SIGTERM does in the daemon.
@Suite("APIServer at a graceful shutdown")
struct APIServerShutdownTests {
    let logger = Logger(label: "test")

    @Test("a request in flight is answered, an idle keep-alive connection is closed, the socket is removed")
    func drainsTheConnectionsAndRemovesTheSocket() async throws {
        let directory = try TemporaryDirectory(prefix: "geoattrd-api")
        let socket = directory.file("api.sock")
        let store = AttributeStore(powerState: .foreground)
        store.publish(ServedResult(result: ServerFixture.result, obtainedAt: .now))
        // Hands a waiting refresh no result: its request stays in flight until the shutdown.
        let scheduler = RecordingScheduler()
        let server = APIServer(
            listening: .path(socket, mode: 0o600), store: store.reader, scheduler: scheduler,
            policy: AccessPolicy(daemonUID: getuid()), schedule: ScheduleConfiguration(), registry: nil, logger: logger)
        try await server.start()

        _ = try await runServiceGroup([server], logger: logger) { trigger in
            let idle = try RawUnixConnection(path: socket)
            idle.send("GET /v1/attributes HTTP/1.1\r\nhost: geoattrd\r\n\r\n")
            let first = await idle.response()
            #expect(first.response?.status == 200)
            #expect(first.response?.header("connection") == nil)
            #expect(await idle.read(timeout: .milliseconds(200)) == ("", false), "the keep-alive connection closed before the shutdown")

            let waiting = try RawUnixConnection(path: socket)
            waiting.send("POST /v1/refresh?wait=60 HTTP/1.1\r\nhost: geoattrd\r\ncontent-length: 0\r\n\r\n")
            #expect(await eventually { scheduler.commands.contains { if case .refresh(_, waits: true) = $0 { true } else { false } } })

            trigger.triggerGracefulShutdown()
            // Sooner than the 5 s the server waits for its connections before it stops their loops.
            #expect(await idle.read(timeout: .seconds(4)) == ("", true), "the idle connection was not closed at once, or was sent more")
            let answer = await waiting.response(timeout: .seconds(4))
            #expect(answer.response?.status == 503)
            #expect(answer.response?.header("connection") == "close")
            #expect(answer.response?.body.contains(#""error":"shutting_down""#) == true)
            #expect(await waiting.read(timeout: .seconds(4)).closed)
        }
        #expect(access(socket, F_OK) != 0, "the socket file outlived the server")
        #expect(throws: (any Error).self) { try RawUnixConnection(path: socket) }
    }
}
