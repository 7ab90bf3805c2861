import GeoPlaces
import GeoAttrCore
import GeoAttrLinux
import GeoAttrModel
import GeoAttrServer
import Logging
import Metrics
import Prometheus
import GeoAttrSettings

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The socket API end to end: the daemon's own `APIServer` listening on a Unix socket as the
/// daemon does (NIO's accept, SO_PEERCRED, the HTTP/1 decoder with the daemon's limits, the API
/// handler), with a running scheduler and a store behind it. Each input is one client
/// connection: the bytes are sent, the write side is shut, and the answer is read to the end.
/// A crash anywhere in the server, a connection the server never closes, or a watch stream that
/// outlives its connection (it would render every update for as long as the daemon runs) is a
/// finding.
/// Inputs are those of `http`: the first byte's upper bits cut the rest into separate sends, at
/// most `maximumSends` of them (its client bits do not apply: the credentials are real).
///
/// Nothing is replaced: the peer credentials are this process's (root or the daemon's uid, so
/// every route is reachable), and `POST /v1/refresh`, `PUT /v1/state` and `GET /v1/watch` really
/// reach the scheduler and the store from other threads, which the in-memory `http` harness
/// leaves out. A real connection per input makes it several times slower than `http`.
struct HTTPSocketFuzz: FuzzHarness {
    let socketPath: String
    let store: AttributeStore
    /// How long the server may take to answer and close once the client has shut its side.
    static let answerTimeoutSeconds = 10

    init() throws {
        signal(SIGPIPE, SIG_IGN)
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(DescribedMetricsFactory(registry: registry))
        MetricFamilies.registerAtZero(in: registry)
        let logger = DiscardingLogHandler.logger
        let location = try StaticFixSource(latitude: 47.3769, longitude: 8.5417, altitudeMeters: 408, horizontalErrorMeters: 25)
        var schedule = ScheduleConfiguration()
        // Refresh tokens come back at once, so POST /v1/refresh keeps reaching a fix.
        schedule.refreshInterval = .milliseconds(1)
        let store = AttributeStore(powerState: .foreground)
        // As the daemon's index reloader does once its index is loaded: the status names it.
        store.publishIndexState(.loaded(version: FixedPlace().indexVersion))
        self.store = store
        let scheduler = Scheduler(
            configuration: schedule, fixSource: location, staticSource: location, geocoders: GeocoderSlot(FixedPlace()),
            cache: CacheWriter(
                store: CacheFile(directory: Scratch.path("http-state", directory: true)), blockingWork: DedicatedThreadStarter(),
                logger: logger),
            store: store, initialPower: .foreground,
            logger: logger)
        socketPath = Scratch.path("api.sock")
        let server = APIServer(
            listening: .path(socketPath, mode: 0o600), store: store.reader, scheduler: scheduler,
            policy: AccessPolicy(daemonUID: getuid()), schedule: schedule, limits: ServerLimits(), registry: registry,
            logger: logger)
        let started = runBlocking { () async -> String? in
            do {
                try await server.start()
                return nil
            } catch {
                return "\(error)"
            }
        }
        if let started { throw HarnessSetupError(description: "the API server did not start: \(started)") }
        Task { await scheduler.run() }
        // The first fix is served before the first input, so /v1/attributes has something to show.
        for _ in 0..<1000 where store.served == nil {
            usleep(10_000)
        }
        guard store.served != nil else { throw HarnessSetupError(description: "no result served after 10 s") }
    }

    /// Nanoseconds all of this process's threads have spent runnable but waiting for a CPU
    /// (the second field of /proc/self/task/TID/schedstat). It grows while another program holds
    /// the CPU; a server thread that sleeps instead of closing adds nothing.
    static func runQueueWait() -> UInt64 {
        guard let tasks = opendir("/proc/self/task") else { return 0 }
        defer { closedir(tasks) }
        var total: UInt64 = 0
        var line = [CChar](repeating: 0, count: 128)
        while let entry = readdir(tasks) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard name.first?.isNumber == true, let file = fopen("/proc/self/task/\(name)/schedstat", "r") else { continue }
            defer { fclose(file) }
            guard fgets(&line, Int32(line.count), file) != nil else { continue }
            let text = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            let fields = text.split(separator: " ")
            if fields.count >= 2, let waited = UInt64(fields[1]) { total += waited }
        }
        return total
    }

    func run(_ input: [UInt8]) {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { fatalError("http-socket harness: socket: errno \(errno)") }
        defer { close(fd) }
        var timeout = timeval(tv_sec: Self.answerTimeoutSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        guard connect(to: socketPath, fd) else { fatalError("http-socket harness: connect: errno \(errno)") }
        guard let mode = input.first else { return }
        defer { expectStreamsEnded() }
        let request = Array(input.dropFirst())
        let sendSize = Self.pieceSize(mode: mode, length: request.count)
        var offset = 0
        while offset < request.count {
            let length = min(sendSize, request.count - offset)
            let sent = request.withUnsafeBytes { send(fd, $0.baseAddress.map { $0 + offset }, length, Int32(MSG_NOSIGNAL)) }
            if sent < 0 {
                if errno == EINTR { continue }
                // The server answered and closed early (a malformed head): what it did is done.
                break
            }
            offset += sent
        }
        shutdown(fd, Int32(SHUT_WR))
        var starvation = StarvationAllowance()
        while true {
            let received = recv(fd, Self.receiveBuffer, Self.receiveBufferSize, 0)
            if received > 0 { continue }
            if received == 0 { return }
            switch errno {
            case EINTR: continue
            case ECONNRESET: return
            case EAGAIN:
                if starvation.allowsAnotherWindow() { continue }
                fatalError(
                    "http-socket harness: the server kept the connection open \(starvation.windows) x \(Self.answerTimeoutSeconds) s after the client shut its side")
            default:
                fatalError("http-socket harness: recv: errno \(errno)")
            }
        }
    }

    /// The server has closed the connection (or this side has), so the watch streams it started
    /// must end: they are cancelled on other threads, so give them the time an answer gets.
    private func expectStreamsEnded() {
        guard store.updateSubscriberCount > 0 else { return }
        var starvation = StarvationAllowance()
        repeat {
            let deadline = ContinuousClock.now + .seconds(Self.answerTimeoutSeconds)
            while ContinuousClock.now < deadline {
                if store.updateSubscriberCount == 0 { return }
                usleep(200)
            }
        } while starvation.allowsAnotherWindow()
        fatalError(
            "http-socket harness: \(store.updateSubscriberCount) watch stream(s) still open \(starvation.windows) x \(Self.answerTimeoutSeconds) s after their connection closed")
    }

    /// The most sends one input is cut into. Each send wakes the server's event loop, which is
    /// what this harness spends its time on; the in-memory `http` harness cuts its inputs at
    /// every byte boundary, so here the splits only need to reach the socket path's partial
    /// reads: inputs up to this many bytes are still cut as finely as the mode asks.
    static let maximumSends = 64

    /// The bytes per send: the first byte's upper bits (0: all at once), made coarser so that no
    /// input takes more than `maximumSends` sends.
    static func pieceSize(mode: UInt8, length: Int) -> Int {
        let requested = Int(mode >> 3)
        guard requested > 0, length > 0 else { return max(length, 1) }
        return max(requested, (length + maximumSends - 1) / maximumSends)
    }

    /// The answer is read and dropped, into one buffer for the process (inputs run one at a time).
    static let receiveBufferSize = 64 * 1024
    nonisolated(unsafe) static let receiveBuffer = UnsafeMutableRawPointer.allocate(byteCount: receiveBufferSize, alignment: 16)

    private func connect(to path: String, _ fd: Int32) -> Bool {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) == 0
            }
        }
    }
}

/// Whether a wait for the server that timed out may go on. A window in which this process's
/// threads sat runnable for a second or more is another program holding the CPU (a campaign at
/// idle priority stops dead beside any busy process), not a server that hangs: wait again, up
/// to 30 windows. The first timeout only starts the measurement, so /proc is read only once a
/// wait has timed out, not on every input.
struct StarvationAllowance {
    private var starvedBefore: UInt64?
    /// Windows waited so far, counting the one that just ended.
    private(set) var windows = 1

    mutating func allowsAnotherWindow() -> Bool {
        let starved = HTTPSocketFuzz.runQueueWait()
        guard windows <= 30, starvedBefore.map({ starved - $0 >= 1_000_000_000 }) ?? true else { return false }
        starvedBefore = starved
        windows += 1
        return true
    }
}

/// A geocoder with one answer, so the attributes carry every geo.* field.
struct FixedPlace: Geocoding {
    func place(latitude: Double, longitude: Double) -> GeoPlace {
        GeoPlace(countryCode: "CH", regionCode: "CH-ZH", localityName: "Zürich", postalCode: "8001", continentCode: "EU",
              boundaryMarginMeters: 1520)
    }

    var indexVersion: String { "fuzz fixture 1, built 2026-01-01" }
}
