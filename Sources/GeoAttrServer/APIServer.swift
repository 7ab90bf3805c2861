public import GeoAttrCore
public import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
public import Prometheus
public import ServiceLifecycle
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Limits that keep a misbehaving client from hurting the daemon or other clients.
public struct ServerLimits: Sendable, Hashable {
    /// Request line and headers.
    public var maximumHeadBytes = 8 * 1024
    public var maximumBodyBytes = 1024
    /// A request head must arrive completely within this time (slow clients).
    public var headTimeout: Duration = .seconds(10)
    /// A keep-alive connection with no request for this long is closed.
    public var idleTimeout: Duration = .seconds(60)
    public var maximumConnections = 1024
    /// Server-Sent Events heartbeat comment interval on `/v1/watch`.
    public var heartbeatInterval: Duration = .seconds(30)
    /// `POST /v1/refresh?wait=` is capped at this.
    public var maximumRefreshWait: Duration = .seconds(120)

    public init() {}
}

/// The HTTP/1.1 API on a Unix domain socket, on SwiftNIO's HTTP/1 codec.
///
/// It reads the served result and status from the `AttributeStore` and sends commands to the
/// `Scheduler`; it never reaches into either's internals.
public final class APIServer: Service, Sendable {
    public enum Listening: Sendable {
        /// Bind a new socket at `path` with `mode`; removed at shutdown.
        case path(String, mode: UInt32)
        /// A socket passed by systemd (socket activation): used as is, never removed.
        case descriptor(Int32)
    }

    let context: ServerContext
    private let listening: Listening
    private let group: MultiThreadedEventLoopGroup
    private let serverChannel = Mutex<(any Channel)?>(nil)

    public init(
        listening: Listening,
        store: AttributeStore,
        scheduler: Scheduler,
        policy: AccessPolicy,
        schedule: ScheduleConfiguration,
        limits: ServerLimits = ServerLimits(),
        registry: PrometheusCollectorRegistry?,
        logger: Logger
    ) {
        self.listening = listening
        context = ServerContext(
            store: store, scheduler: scheduler, policy: policy, schedule: schedule, limits: limits,
            registry: registry, logger: logger)
        group = MultiThreadedEventLoopGroup(numberOfThreads: System.coreCount)
    }

    /// Applies a reloaded access policy and schedule (for staleness) to new requests.
    public func update(policy: AccessPolicy, schedule: ScheduleConfiguration) {
        context.policy.withLock { $0 = policy }
        context.setTTL(schedule.ttl)
    }

    /// Binds (or adopts) the socket. Separate from `run()` so the daemon can report readiness
    /// only once clients can connect.
    public func start() async throws {
        let descriptor: Int32
        switch listening {
        case .path(let path, let mode):
            descriptor = try UnixListener.make(path: path, mode: mode)
        case .descriptor(let fd):
            descriptor = fd
        }
        let context = context
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 1024)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try ConnectionSetup.configure(channel, context: context)
                }
            }
        let channel = try await bootstrap.withBoundSocket(descriptor).get()
        serverChannel.withLock { $0 = channel }
        context.logger.info("API listening", metadata: ["socket": "\(listening.description)"])
    }

    public func run() async throws {
        if serverChannel.withLock({ $0 }) == nil {
            try await start()
        }
        guard let channel = serverChannel.withLock({ $0 }) else { return }
        let context = context
        await withGracefulShutdownHandler {
            try? await channel.closeFuture.get()
        } onGracefulShutdown: {
            context.logger.info("API: closing the socket and ending streams")
            channel.close(promise: nil)
            context.connections.shutDownAll()
        }
        // Let open connections finish their current response, bounded by the group's
        // maximum graceful shutdown duration.
        await context.connections.waitUntilEmpty(timeout: .seconds(5))
        if case .path(let path, _) = listening {
            unlink(path)
        }
        try? await group.shutdownGracefully()
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
    let store: AttributeStore
    let scheduler: Scheduler
    let policy: Mutex<AccessPolicy>
    let limits: ServerLimits
    let registry: PrometheusCollectorRegistry?
    let logger: Logger
    let connections = ConnectionRegistry()
    let metrics = ServerMetrics()
    let responses = ResponseCache()
    /// The schedule's TTL in nanoseconds (all the API needs of the schedule: staleness), read on
    /// the hot path without a lock.
    private let ttlNanoseconds: Atomic<Int64>

    var ttl: Duration { .nanoseconds(ttlNanoseconds.load(ordering: .relaxed)) }

    func setTTL(_ ttl: Duration) {
        ttlNanoseconds.store(ttl.nanosecondsValue, ordering: .relaxed)
    }

    package init(
        store: AttributeStore, scheduler: Scheduler, policy: AccessPolicy, schedule: ScheduleConfiguration,
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
