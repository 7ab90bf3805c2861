public import GeoAttrCore
import GeoAttrLinux
import GeoAttrModel
public import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
public import Prometheus
public import ServiceLifecycle
import Synchronization
public import GeoAttrSettings

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The HTTP/1.1 API on a Unix domain socket, on SwiftNIO's HTTP/1 codec; and, when configured,
/// a second socket that answers `GET /metrics` alone through the same pipeline.
///
/// It reads the served result and status through the `AttributeStore`'s read-only `reader` and
/// sends commands to the scheduler (`SchedulerCommands`); it never reaches into either's
/// internals, and changes nothing in the store itself.
public final class APIServer: Service, Sendable {
    public enum Listening: Sendable {
        /// Bind a new socket at `path` with `mode`; removed at shutdown.
        case path(String, mode: UInt32)
        /// A socket passed by systemd (socket activation): used as is, never removed.
        case descriptor(Int32)
    }

    /// One socket the server answers on, with the endpoint table it answers from.
    struct Listener: Sendable {
        /// What the log calls it.
        var name: String
        var listening: Listening
        var table: [Endpoint]
        var timeouts: ConnectionTimeouts
        /// The configuration key its failures name.
        var setting: String
    }

    /// Why a socket could not be bound or adopted, naming the key that configures it.
    public struct StartFailure: Error, Sendable, CustomStringConvertible {
        public var description: String
    }

    let context: ServerContext
    private let listeners: [Listener]
    private let group: MultiThreadedEventLoopGroup
    private let serverChannels = Mutex<[any Channel]>([])

    /// - Parameter metricsListening: a second socket that answers `GET /metrics` alone
    ///   (`api.metrics_socket`), whoever connects; `nil`: none.
    public init(
        listening: Listening,
        metricsListening: Listening? = nil,
        store: AttributeReader,
        scheduler: any SchedulerCommands,
        policy: AccessPolicy,
        schedule: ScheduleConfiguration,
        limits: ServerLimits = ServerLimits(),
        registry: PrometheusCollectorRegistry?,
        logger: Logger
    ) {
        let api = Listener(
            name: "API", listening: listening, table: EndpointTable.endpoints, timeouts: ConnectionTimeouts(limits),
            setting: "socket.path")
        let metrics = metricsListening.map {
            Listener(
                name: "metrics socket", listening: $0, table: EndpointTable.metricsOnly,
                timeouts: .metricsSocket(limits), setting: "api.metrics_socket")
        }
        listeners = [api] + (metrics.map { [$0] } ?? [])
        context = ServerContext(
            store: store, scheduler: scheduler, policy: policy, schedule: schedule, limits: limits,
            registry: registry, logger: logger)
        // One event loop per CPU the daemon may run on: loops held to fewer CPUs would only take
        // turns on them, each wait a scheduler slice added to some client's answer.
        group = MultiThreadedEventLoopGroup(numberOfThreads: UsableCPUs.count(within: System.coreCount))
    }

    /// Applies a reloaded access policy and schedule (for staleness) to new requests.
    ///
    /// A changed policy reaches open connections too: each judges its client again, a watch
    /// whose client's grant changed ends, and a keep-alive connection whose client's grant
    /// changed closes after the answer in flight, so its client reconnects under the new rules.
    public func update(policy: AccessPolicy, schedule: ScheduleConfiguration) {
        context.update(policy: policy, ttl: schedule.ttl)
    }

    /// Binds (or adopts) every socket, or none: a socket bound before one that fails is closed
    /// and removed again. Separate from `run()` so the daemon can report readiness only once
    /// clients can connect.
    public func start() async throws {
        var bound: [any Channel] = []
        for listener in listeners {
            do {
                bound.append(try await start(listener))
            } catch {
                for (channel, earlier) in zip(bound, listeners) {
                    try? await channel.close().get()
                    earlier.removeSocketFile()
                }
                throw StartFailure(description: "\(listener.setting): \(error)")
            }
        }
        serverChannels.withLock { $0 = bound }
    }

    private func start(_ listener: Listener) async throws -> any Channel {
        let descriptor: Int32
        switch listener.listening {
        case .path(let path, let mode):
            for removed in UnixListener.removeStaleStaging(of: path) {
                context.logger.notice("removed a socket staging directory left by an interrupted start", metadata: ["path": "\(removed)"])
            }
            descriptor = try UnixListener.make(path: path, mode: mode)
        case .descriptor(let fd):
            descriptor = fd
        }
        let (context, table, timeouts) = (context, listener.table, listener.timeouts)
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 1024)
            .childChannelInitializer { channel in
                ConnectionSetup.configure(channel, context: context, table: table, timeouts: timeouts)
            }
        let channel = try await bootstrap.withBoundSocket(descriptor).get()
        context.logger.info("\(listener.name) listening", metadata: ["socket": "\(listener.listening.description)"])
        return channel
    }

    public func run() async throws {
        if serverChannels.withLock({ $0.isEmpty }) {
            try await start()
        }
        let channels = serverChannels.withLock { $0 }
        guard !channels.isEmpty else { return }
        let context = context
        await withGracefulShutdownHandler {
            for channel in channels {
                try? await channel.closeFuture.get()
            }
        } onGracefulShutdown: {
            context.logger.info("API: closing the sockets and ending streams")
            for channel in channels {
                channel.close(promise: nil)
            }
            context.connections.shutDownAll()
            context.refreshWaits.finishAll()
        }
        // Let open connections finish their current response, bounded by the group's
        // maximum graceful shutdown duration, and refresh requests hand their answers to the
        // loops before the loops stop.
        await context.connections.waitUntilEmpty(timeout: .seconds(5))
        await context.refreshWaits.waitUntilNone(timeout: .seconds(2))
        for listener in listeners {
            listener.removeSocketFile()
        }
        try? await group.shutdownGracefully()
    }
}

extension APIServer.Listener {
    /// A socket the server bound itself goes with it; one passed by systemd is systemd's.
    func removeSocketFile() {
        if case .path(let path, _) = listening {
            unlink(path)
        }
    }
}

extension APIServer.Listening: CustomStringConvertible {
    public var description: String {
        switch self {
        case .path(let path, let mode): "\(path) (mode 0\(String(mode, radix: 8)))"
        case .descriptor(let fd): "passed descriptor \(fd)"
        }
    }
}

/// Everything a connection needs, shared by all of them.
package final class ServerContext: Sendable {
    /// What is served and the status, read-only: changes go through `scheduler`.
    let store: AttributeReader
    let scheduler: any SchedulerCommands
    let policy: Mutex<AccessPolicy>
    let limits: ServerLimits
    let registry: PrometheusCollectorRegistry?
    let logger: Logger
    /// Grows with every change of `policy`: a connection that judged its client under an
    /// older version judges it again.
    let policyVersion = Atomic<UInt64>(0)
    let connections = ConnectionRegistry()
    let refreshWaits = RefreshWaits()
    let metrics = ServerMetrics()
    let buildInfo = BuildInfoMetric()
    let responses = ResponseCache()
    /// The schedule's TTL in nanoseconds (all the API needs of the schedule: staleness), read on
    /// the hot path without a lock.
    private let ttlNanoseconds: Atomic<Int64>

    var ttl: Duration { .nanoseconds(ttlNanoseconds.load(ordering: .relaxed)) }

    /// The grant of `peer` under the current policy, and the policy's version.
    func grant(for peer: PeerIdentity) -> (grant: Grant, version: UInt64) {
        policy.withLock { policy in (peer.grant(under: policy), policyVersion.load(ordering: .sequentiallyConsistent)) }
    }

    /// Why `peer` sees nothing under the current policy, for its 403.
    func refusal(for peer: PeerIdentity) -> String {
        policy.withLock { peer.refusal(under: $0) }
    }

    /// Applies a reloaded policy and TTL; open connections judge their clients again when the
    /// policy changed.
    func update(policy: AccessPolicy, ttl: Duration) {
        let changed = self.policy.withLock { current in
            guard current != policy else { return false }
            current = policy
            policyVersion.add(1, ordering: .sequentiallyConsistent)
            return true
        }
        ttlNanoseconds.store(ttl.nanosecondsValue, ordering: .relaxed)
        if changed { connections.policyChanged() }
    }

    package init(
        store: AttributeReader, scheduler: any SchedulerCommands, policy: AccessPolicy, schedule: ScheduleConfiguration,
        limits: ServerLimits, registry: PrometheusCollectorRegistry?, logger: Logger
    ) {
        self.store = store
        self.scheduler = scheduler
        self.policy = Mutex(policy)
        ttlNanoseconds = Atomic(schedule.ttl.nanosecondsValue)
        self.limits = limits
        self.registry = registry
        self.logger = logger
    }
}
