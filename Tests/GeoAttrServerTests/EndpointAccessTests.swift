import GeoAttrModel
@testable import GeoAttrServer
import NIOHTTP1
import Testing
import GeoAttrSettings

/// Every row of the endpoint table against every access level it names: who gets through,
/// and what the others are told.
@Suite("Endpoint table access")
struct EndpointAccessTests {
    static let fixture = ServerFixture()
    static let peers = [ServerFixture.blind, ServerFixture.reader, ServerFixture.mutator]

    /// A request the row's endpoint accepts from a client allowed to make it.
    static func acceptableRequest(_ endpoint: Endpoint, as peer: PeerIdentity) -> APIRequest {
        fixture.request(endpoint.method, endpoint.path, as: peer, body: endpoint.path == "/v1/state" ? "background" : "")
    }

    @Test("each row × each access level", arguments: EndpointTable.endpoints.indices, peers.indices)
    func rowAndAccessLevel(row: Int, peerIndex: Int) async {
        let endpoint = EndpointTable.endpoints[row]
        let peer = Self.peers[peerIndex]
        let routed = Self.fixture.route(Self.acceptableRequest(endpoint, as: peer))
        #expect(routed.endpoint == endpoint.name)
        let level = Self.fixture.client(peer).grant
        switch endpoint.access {
        case .read where level.level == .none, .mutate where level.level == .none:
            #expect(routed.reply.response?.status == .forbidden)
            #expect(routed.reply.response?.text.contains("may not read location data: access.rules entry uid:1003=none decides") == true)
        case .mutate(let action) where !level.mayMutate:
            #expect(routed.reply.response?.status == .forbidden)
            #expect(routed.reply.response?.text.contains("uid \(peer.uid) may not \(action); see access.mutate") == true)
        case .mutate:
            #expect(routed.reply.deferred != nil)
        case .read where endpoint.path == "/v1/watch":
            #expect(routed.reply.isWatch)
        case .read, .anyone:
            #expect(routed.reply.response?.status == .ok)
        }
    }

    @Test("a method a path does not take: 405, counted under the path's endpoint", arguments: EndpointTable.endpoints.indices)
    func methodNotAllowed(row: Int) {
        let endpoint = EndpointTable.endpoints[row]
        let routed = Self.fixture.route(Self.fixture.request(.DELETE, endpoint.path, as: ServerFixture.mutator))
        #expect(routed.endpoint == endpoint.name)
        #expect(routed.reply.response?.status == .methodNotAllowed)
        #expect(routed.reply.response?.text == #"{"error":"method_not_allowed","message":"DELETE is not allowed on \#(endpoint.path)"}"#)
        let allowed = EndpointTable.endpoints.filter { $0.path == endpoint.path }.map { "\($0.method)" }
        #expect(routed.reply.response?.headers["allow"] == [allowed.joined(separator: ", ")])
        #expect(!allowed.isEmpty)
    }

    @Test func aMethodNotAllowedNamesTheMethodsThePathTakes() {
        let routed = Self.fixture.route(Self.fixture.request(.POST, "/v1/attributes"))
        #expect(routed.reply.response?.headers["allow"] == ["GET, HEAD"])
    }

    @Test func unknownPathIsNotFoundForReadersAndForbiddenForTheBlind() {
        let reader = Self.fixture.route(Self.fixture.request(.GET, "/v2/nothing?x=1"))
        #expect(reader.endpoint == "unknown")
        #expect(reader.reply.response?.status == .notFound)
        #expect(reader.reply.response?.text == #"{"error":"not_found","message":"no such endpoint: /v2/nothing"}"#)
        let blind = Self.fixture.route(Self.fixture.request(.GET, "/v2/nothing", as: ServerFixture.blind))
        #expect(blind.endpoint == "unknown")
        #expect(blind.reply.response?.status == .forbidden)
        #expect(
            blind.reply.response?.text
                == #"{"error":"forbidden","message":"uid 1003 may not read location data: access.rules entry uid:1003=none decides for this uid (a uid: entry decides before every gid: entry); change or remove it, then reload"}"#)
    }

    @Test func theBlindMayNotEvenLearnWhichMethodsAPathTakes() {
        let routed = Self.fixture.route(Self.fixture.request(.DELETE, "/v1/attributes", as: ServerFixture.blind))
        #expect(routed.reply.response?.status == .forbidden)
        let metrics = Self.fixture.route(Self.fixture.request(.DELETE, "/metrics", as: ServerFixture.blind))
        #expect(metrics.reply.response?.status == .methodNotAllowed)
    }

    @Test func rootAndTheDaemonMayMutateWithoutARule() {
        for uid: UInt32 in [0, 999] {
            let peer = PeerIdentity(uid: uid, gid: uid, groups: [uid])
            #expect(Self.fixture.route(Self.fixture.request(.POST, "/v1/refresh", as: peer)).reply.deferred != nil)
        }
    }

    @Test func limitsComeBeforeAccessAndCloseTheConnection() {
        var limits = ServerLimits()
        limits.maximumHeadBytes = 64
        let fixture = ServerFixture(limits: limits)
        let long = fixture.route(fixture.request(.GET, "/v1/attributes?" + String(repeating: "a", count: 64), as: ServerFixture.blind))
        #expect(long.endpoint == "attributes")
        #expect(long.reply.response?.status == .requestHeaderFieldsTooLarge)
        #expect(long.reply.response?.text == #"{"error":"headers_too_large","message":"request target too long"}"#)
        #expect(long.reply.response?.headerList.last == "connection: close")
        let large = fixture.route(fixture.request(.PUT, "/v1/state", as: ServerFixture.blind, bodyTooLarge: true))
        #expect(large.endpoint == "state")
        #expect(large.reply.response?.status == .payloadTooLarge)
        #expect(large.reply.response?.text == #"{"error":"body_too_large","message":"request body larger than 1024 bytes"}"#)
        #expect(large.reply.response?.headerList.last == "connection: close")
    }
}
