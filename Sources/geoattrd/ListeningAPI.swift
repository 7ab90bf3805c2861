import GeoAttrServer
import ServiceLifecycle

/// The API as a service of the group. Its socket is bound (or adopted) while the daemon is
/// assembled, before any service runs, so that no fix, log line or status is ever seen before
/// clients can connect; this reports readiness and serves until the graceful shutdown.
struct ListeningAPI: Service {
    let server: APIServer
    let onListening: @Sendable () -> Void

    func run() async throws {
        onListening()
        try await server.run()
    }
}
