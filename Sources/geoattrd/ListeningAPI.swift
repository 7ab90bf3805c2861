import GeoAttrServer
import ServiceLifecycle

/// The API as a service of the group: binds (or adopts) the socket, reports that clients can
/// connect, then serves until the graceful shutdown. A socket that cannot be bound ends the group
/// with the error, as any failing service does.
struct ListeningAPI: Service {
    let server: APIServer
    let onListening: @Sendable () -> Void

    func run() async throws {
        try await server.start()
        onListening()
        try await server.run()
    }
}
