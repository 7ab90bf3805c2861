import GeoAttrCore
import NIOCore
import Synchronization

/// The open connections: counted for the limits, told when the server shuts down or the access
/// policy changes.
final class ConnectionRegistry: Sendable {
    private struct State {
        var channels: [ObjectIdentifier: (channel: any Channel, uid: UInt32?)] = [:]
        var perUID: [UInt32: Int] = [:]
        var shuttingDown = false
    }

    enum Refusal: Sendable {
        case shuttingDown
        case tooManyConnections
        case tooManyForUID(UInt32)
    }

    private let state = Mutex(State())
    /// Shutdown, waiting for the last connection to go.
    private let drain = DrainWaiters()

    /// Adds a connection, or says why not. `uid`: the uid it counts against (`nil`: exempt
    /// from the per-uid limit).
    func admit(_ channel: any Channel, uid: UInt32?, limit: Int, perUIDLimit: Int) -> Refusal? {
        state.withLock { state in
            guard !state.shuttingDown else { return .shuttingDown }
            guard state.channels.count < limit else { return .tooManyConnections }
            if let uid {
                let held = state.perUID[uid, default: 0]
                guard held < perUIDLimit else { return .tooManyForUID(uid) }
                state.perUID[uid] = held + 1
            }
            state.channels[ObjectIdentifier(channel)] = (channel, uid)
            return nil
        }
    }

    func remove(_ channel: any Channel) {
        let drained = state.withLock { state in
            if let removed = state.channels.removeValue(forKey: ObjectIdentifier(channel)), let uid = removed.uid {
                let held = state.perUID[uid, default: 1] - 1
                state.perUID[uid] = held > 0 ? held : nil
            }
            return state.channels.isEmpty
        }
        if drained { drain.wakeAll() }
    }

    var count: Int { state.withLock { $0.channels.count } }

    var isShuttingDown: Bool { state.withLock { $0.shuttingDown } }

    /// Tells every connection to quiesce (NIO's `ChannelShouldQuiesceEvent`): streams end, idle
    /// keep-alive connections close, the others after the answer in flight.
    func shutDownAll() {
        let channels = state.withLock { state in
            state.shuttingDown = true
            return state.channels.values.map(\.channel)
        }
        for channel in channels {
            channel.pipeline.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent())
        }
    }

    /// Tells every connection that the access policy changed, so that each judges its client
    /// again at once, streams and idle keep-alive connections included.
    func policyChanged() {
        let channels = state.withLock { $0.channels.values.map(\.channel) }
        for channel in channels {
            channel.pipeline.fireUserInboundEventTriggered(AccessPolicyChangedEvent())
        }
    }

    /// Returns once the last connection has gone, or after `timeout`.
    func waitUntilEmpty(timeout: Duration) async {
        await drain.wait(atMost: timeout) { self.count == 0 }
    }
}

/// Sent through each connection's pipeline when a reload changed the access policy.
struct AccessPolicyChangedEvent: Sendable {}
