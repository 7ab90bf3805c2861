import GeoAttrModel
import NIOHTTP1

/// `PUT /v1/state` with `foreground` or `background` (as in the state file): switches the
/// schedule, answering once the scheduler has applied it.
enum StateEndpoint {
    static func answer(_ request: APIRequest, server: ServerContext) -> EndpointReply {
        guard let state = PowerState(stateFileContent: String(decoding: request.body, as: UTF8.self)) else {
            return .response(.error(.badRequest, .badRequest, "the body must be foreground or background"))
        }
        let scheduler = server.scheduler
        let origin = request.client.origin
        return .deferred(
            DeferredResponse { _ in
                await scheduler.applyPowerState(state, origin: origin)
                return .json(["state": state.rawValue])
            })
    }
}
