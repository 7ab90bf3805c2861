import GeoAttrCore
import GeoAttrModel
@testable import GeoAttrServer
import GeoPlaces
import Logging
import NIOHTTP1
import Prometheus
import GeoAttrSettings

/// A server context over an in-memory store and a recording scheduler, and the clients the
/// tests speak as: one for each access level of the endpoint table.
struct ServerFixture {
    static let result = LocationResult(
        fix: Fix(latitude: 52.5162746, longitude: 13.3777041, mode: .threeDimensional, horizontalErrorMeters: 12,
                 timeSource: .receiver, receivedAt: UTCTimestamp(seconds: 1_795_000_000), origin: .gps),
        place: GeoPlace(countryCode: "DE", regionCode: "DE-BE", localityName: "Berlin", postalCode: "10117", continentCode: "EU"),
        source: .gps, updatedAt: UTCTimestamp(seconds: 1_795_000_000), indexVersion: "test", generation: 7)

    /// uid 1003 sees nothing, 1001 the country, gid 1004 the locality with 2 decimals; 1002 may
    /// mutate; everyone else reads exact.
    static let policy = AccessPolicy(
        rules: [
            .init(subject: .uid(1003), grant: Grant(level: .none)),
            .init(subject: .uid(1001), grant: Grant(level: .country)),
            .init(subject: .gid(1004), grant: Grant(level: .locality, coordinateDecimals: 2)),
        ],
        defaultGrant: Grant(level: .exact), mutators: [.uid(1002)], daemonUID: 999)

    /// A client that may see no location data.
    static let blind = PeerIdentity(uid: 1003, gid: 1003, groups: [1003])
    /// A client that reads exact attributes and may not mutate.
    static let reader = PeerIdentity(uid: 1000, gid: 1000, groups: [1000])
    static let countryReader = PeerIdentity(uid: 1001, gid: 1001, groups: [1001])
    static let localityReader = PeerIdentity(uid: 1005, gid: 1004, groups: [1004])
    /// A client that reads and may force refreshes and change the state.
    static let mutator = PeerIdentity(uid: 1002, gid: 1002, groups: [1002])

    let store: AttributeStore
    let scheduler: RecordingScheduler
    let server: ServerContext

    init(
        served: Bool = true, metrics: Bool = true, limits: ServerLimits = ServerLimits(),
        scheduler: RecordingScheduler = RecordingScheduler(), policy: AccessPolicy = Self.policy
    ) {
        store = AttributeStore(powerState: .foreground)
        if served { store.publish(ServedResult(result: Self.result, obtainedAt: .now)) }
        self.scheduler = scheduler
        server = ServerContext(
            store: store.reader, scheduler: scheduler, policy: policy, schedule: ScheduleConfiguration(), limits: limits,
            registry: metrics ? PrometheusCollectorRegistry() : nil,
            logger: Logger(label: "geoattrd.test", factory: { _ in SwiftLogNoOpLogHandler() }))
    }

    func client(_ peer: PeerIdentity) -> APIClient {
        APIClient(peer: peer, grant: server.grant(for: peer).grant)
    }

    func request(
        _ method: HTTPMethod, _ uri: String, as peer: PeerIdentity = Self.reader, headers: HTTPHeaders = [:],
        body: String = "", bodyTooLarge: Bool = false
    ) -> APIRequest {
        APIRequest(
            head: HTTPRequestHead(version: .http1_1, method: method, uri: uri, headers: headers), body: Array(body.utf8),
            bodyTooLarge: bodyTooLarge, client: client(peer))
    }

    /// Routes a request through the endpoint table, as the router does.
    func route(_ request: APIRequest) -> EndpointRouter.Routed {
        EndpointRouter.route(request, in: EndpointTable.endpoints, server: server)
    }
}
