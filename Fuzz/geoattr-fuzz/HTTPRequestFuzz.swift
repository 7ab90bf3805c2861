import GeoAttrCore
import GeoAttrModel
import GeoAttrServer
import Logging
import Metrics
public import NIOCore
public import NIOEmbedded
import Prometheus
import Synchronization
import GeoAttrSettings

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The socket API's request handling, in memory: each input is one connection set up by the
/// daemon's own `ConnectionSetup.configure` (admission, peer credentials, NIO's HTTP/1 decoder
/// and encoder with the daemon's limits, the protocol error responder, the connection's state
/// and the endpoint router) on an `EmbeddedChannel`, fed the fuzzed bytes, then closed.
///
/// The first byte picks the client (its uid and gid, seen through SO_PEERCRED) and how the rest
/// is cut into reads; the rest is what the client sends.
///
/// The setup asks the channel for SO_PEERCRED like any socket option; the `EmbeddedChannel`
/// here answers it as the kernel would (a `struct ucred`), so no code path of the server is
/// changed for the harness. None of the clients may mutate, and inputs naming `/v1/watch` are
/// skipped: those routes hand the connection to other threads (the scheduler, the watch
/// stream), which an `EmbeddedChannel` does not allow; the `http-socket` harness covers them.
struct HTTPRequestFuzz: FuzzHarness {
    let context: ServerContext

    /// uid, gid and what the policy below gives them; `nil`: no credentials (the option fails).
    static let clients: [(uid: UInt32, gid: UInt32)?] = [
        (1000, 1000),  // the default: exact
        (1001, 100),  // uid rule: country
        (1004, 1002),  // gid rule: locality, coordinates to 2 decimals
        (1003, 1003),  // uid rule: none (403 but /metrics)
        (1005, 1006),  // gid rule: region/0
        nil,
    ]

    init() throws {
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(DescribedMetricsFactory(registry: registry))
        MetricFamilies.registerAtZero(in: registry)
        let logger = DiscardingLogHandler.logger
        let location = try StaticFixSource(latitude: 47.3769, longitude: 8.5417, altitudeMeters: 408, horizontalErrorMeters: 25)
        let schedule = ScheduleConfiguration()
        let store = AttributeStore(powerState: .foreground)
        // As the daemon's index reloader does once its index is loaded: the status names it.
        store.publishIndexState(.loaded(version: FixedPlace().indexVersion))
        let now = UTCTimestamp.now()
        store.publish(
            ServedResult(
                result: LocationResult(
                    fix: location.makeFix(), place: FixedPlace().place(latitude: location.latitude, longitude: location.longitude),
                    source: .gps, updatedAt: now, indexVersion: FixedPlace().indexVersion, generation: 1_795_248_061_615),
                obtainedAt: .now))
        // Never run: no route these clients can reach sends it anything.
        let scheduler = Scheduler(
            configuration: schedule, fixSource: location, staticSource: location, geocoders: GeocoderSlot(FixedPlace()),
            cache: nil, store: store, initialPower: .foreground, logger: logger)
        let policy = AccessPolicy(
            rules: [
                .init(subject: .uid(1001), grant: Grant(level: .country)),
                .init(subject: .gid(1002), grant: Grant(level: .locality, coordinateDecimals: 2)),
                .init(subject: .uid(1003), grant: Grant(level: .none)),
                .init(subject: .gid(1006), grant: Grant(level: .region, coordinateDecimals: 0)),
            ],
            defaultGrant: Grant(level: .exact), mutators: [], daemonUID: 999)
        context = ServerContext(
            store: store.reader, scheduler: scheduler, policy: policy, schedule: schedule, limits: ServerLimits(),
            registry: registry, logger: logger)
    }

    static let watchPath = Array("/v1/watch".utf8)
    /// GEOATTR_FUZZ_VERBOSE=1: print what the server sends (when replaying).
    static let verbose = getenv("GEOATTR_FUZZ_VERBOSE") != nil

    func run(_ input: [UInt8]) {
        guard let mode = input.first else { return }
        let request = input.dropFirst()
        // The route is matched on the request target exactly as sent (no decoding), so an input
        // without these bytes cannot reach it.
        if request.count >= Self.watchPath.count, request.indices.contains(where: { request[$0...].starts(with: Self.watchPath) }) {
            return
        }
        PeerCredentialsOption.current.withLock { $0 = Self.clients[Int(mode & 0x7) % Self.clients.count] }
        // 0: everything in one read; otherwise reads of 1 to 31 bytes.
        let readSize = Int(mode >> 3)

        let channel = EmbeddedChannel()
        // Completes at once on the embedded loop.
        ConnectionSetup.configure(channel, context: context).whenFailure { error in
            fatalError("http harness: setting up the connection: \(error)")
        }
        channel.connect(to: Self.peerAddress, promise: nil)
        var offset = request.startIndex
        while offset < request.endIndex, channel.isActive {
            let end = readSize == 0 ? request.endIndex : min(offset + readSize, request.endIndex)
            // Errors end up in the handler (a 400, then close); a closed channel stops the loop.
            _ = try? channel.writeInbound(channel.allocator.buffer(bytes: request[offset..<end]))
            offset = end
            while let data = try? channel.readOutbound(as: IOData.self) {
                if Self.verbose, case .byteBuffer(let buffer) = data { print(String(buffer: buffer), terminator: "") }
            }
        }
        // The client goes away. (The head and idle timers are not run: they follow the loop's
        // clock, which an embedded loop moves only when told to.)
        _ = try? channel.finish(acceptAlreadyClosed: true)
    }

    static let peerAddress: SocketAddress = {
        do {
            return try SocketAddress(unixDomainSocketPath: "/run/geoattrd/geoattrd.sock")
        } catch {
            fatalError("http harness: \(error)")
        }
    }()
}

/// SO_PEERCRED on an in-memory channel: the handler reads the client's credentials through
/// `SocketOptionProvider`, as on an accepted socket; here the option's memory is filled the way
/// the kernel fills it (`struct ucred`: pid, uid, gid), with the client the harness picked.
/// Every other option is unsupported, as on a channel without a socket.
enum PeerCredentialsOption {
    static let current = Mutex<(uid: UInt32, gid: UInt32)?>(nil)
}

extension EmbeddedChannel: @retroactive SocketOptionProvider {
    public func unsafeSetSocketOption<Value: Sendable>(
        level: SocketOptionLevel, name: SocketOptionName, value: Value
    ) -> EventLoopFuture<Void> {
        eventLoop.makeFailedFuture(ChannelError.operationUnsupported)
    }

    public func unsafeGetSocketOption<Value: Sendable>(level: SocketOptionLevel, name: SocketOptionName) -> EventLoopFuture<Value> {
        let ucredSize = 12
        guard level == SocketOptionLevel(SOL_SOCKET), let client = PeerCredentialsOption.current.withLock({ $0 }) else {
            return eventLoop.makeFailedFuture(ChannelError.operationUnsupported)
        }
        // SO_PEERGROUPS: the client's gid as its one supplementary group, the rest of the
        // buffer zero, as the kernel leaves it.
        if name == SocketOptionName(59), MemoryLayout<Value>.size >= 4 {
            let memory = UnsafeMutableRawPointer.allocate(byteCount: MemoryLayout<Value>.size, alignment: MemoryLayout<Value>.alignment)
            defer { memory.deallocate() }
            memory.initializeMemory(as: UInt8.self, repeating: 0, count: MemoryLayout<Value>.size)
            memory.storeBytes(of: client.gid, toByteOffset: 0, as: UInt32.self)
            return eventLoop.makeSucceededFuture(memory.load(as: Value.self))
        }
        guard name == SocketOptionName(SO_PEERCRED), MemoryLayout<Value>.size == ucredSize else {
            return eventLoop.makeFailedFuture(ChannelError.operationUnsupported)
        }
        let memory = UnsafeMutableRawPointer.allocate(byteCount: ucredSize, alignment: MemoryLayout<Value>.alignment)
        defer { memory.deallocate() }
        memory.storeBytes(of: Int32(4242), toByteOffset: 0, as: Int32.self)
        memory.storeBytes(of: client.uid, toByteOffset: 4, as: UInt32.self)
        memory.storeBytes(of: client.gid, toByteOffset: 8, as: UInt32.self)
        return eventLoop.makeSucceededFuture(memory.load(as: Value.self))
    }

    public func unsafeSetSocketOption<Value: Sendable>(
        level: NIOBSDSocket.OptionLevel, name: NIOBSDSocket.Option, value: Value
    ) -> EventLoopFuture<Void> {
        unsafeSetSocketOption(level: SocketOptionLevel(level.rawValue), name: SocketOptionName(name.rawValue), value: value)
    }

    public func unsafeGetSocketOption<Value: Sendable>(level: NIOBSDSocket.OptionLevel, name: NIOBSDSocket.Option) -> EventLoopFuture<Value> {
        unsafeGetSocketOption(level: SocketOptionLevel(level.rawValue), name: SocketOptionName(name.rawValue))
    }
}
