import GeoAttrCore
import NIOCore
import NIOHTTP1

/// What a client must be granted to reach an endpoint.
enum AccessNeeded: Sendable, Hashable {
    /// Nothing: the endpoint shows no location data.
    case anyone
    /// A precision level above `none`.
    case read
    /// Read access and `access.mutate`; `action` completes "uid N may not …" in the refusal.
    case mutate(action: String)
}

/// How an endpoint answers a request.
enum EndpointReply: Sendable {
    case response(APIResponse)
    /// An answer that needs the scheduler; written when it is ready.
    case deferred(DeferredResponse)
    /// `GET /v1/watch`: an event stream on the connection, which only the connection can start.
    case watch
}

/// An answer computed off the event loop.
struct DeferredResponse: Sendable {
    /// Written at once when the server shuts down before `work` ends, and `work`'s answer then
    /// dropped; `nil`: the answer is awaited even then.
    var answerAtShutdown: APIResponse?
    /// Counts this request until its answer is handed to the event loop, so that shutdown
    /// waits for it before the loops stop.
    var waits: RefreshWaits?
    /// Given the connection's event loop, for timers that must not outlive a cancelled wait.
    var work: @Sendable (any EventLoop) async -> APIResponse
}

/// One row of the endpoint table.
struct Endpoint: Sendable {
    typealias Handler = @Sendable (APIRequest, ServerContext) -> EndpointReply

    var method: HTTPMethod
    var path: String
    /// The `endpoint` label of `geoattrd_requests_total`.
    var name: String
    var access: AccessNeeded
    var handler: Handler
}
