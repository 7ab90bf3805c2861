import NIOCore
import Synchronization

/// The open connections: counted for the limit, told when the server shuts down.
final class ConnectionRegistry: Sendable {
    private struct State {
        var channels: [ObjectIdentifier: any Channel] = [:]
        var shuttingDown = false
    }

    private let state = Mutex(State())

    /// Adds a connection; `false` when the limit is reached or the server is shutting down.
    func admit(_ channel: any Channel, limit: Int) -> Bool {
        state.withLock { state in
            guard !state.shuttingDown, state.channels.count < limit else { return false }
            state.channels[ObjectIdentifier(channel)] = channel
            return true
        }
    }

    func remove(_ channel: any Channel) {
        _ = state.withLock { $0.channels.removeValue(forKey: ObjectIdentifier(channel)) }
    }

    var count: Int { state.withLock { $0.channels.count } }

    var isShuttingDown: Bool { state.withLock { $0.shuttingDown } }

    /// Tells every connection to finish: streams end, idle keep-alive connections close.
    func shutDownAll() {
        let channels = state.withLock { state in
            state.shuttingDown = true
            return Array(state.channels.values)
        }
        for channel in channels {
            channel.pipeline.fireUserInboundEventTriggered(ServerShutdownEvent())
        }
    }

    func waitUntilEmpty(timeout: Duration) async {
        let deadline = ContinuousClock.now + timeout
        while count > 0, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(10))
        }
    }
}

/// Sent through each connection's pipeline at graceful shutdown.
struct ServerShutdownEvent: Sendable {}
