import GeoAttrCore
import GeoAttrModel
import NIOHTTP1
import GeoAttrSettings

/// `POST /v1/refresh[?wait=SECONDS]`: a forced fix within the refresh budget. Without `wait`,
/// 202 at once; with it, the new attributes when the fix ends within the wait, else 202.
enum RefreshEndpoint {
    static let shutdownAnswer = APIResponse.error(
        .serviceUnavailable, .shuttingDown, "geoattrd is shutting down; retry when it is back")

    static func answer(_ request: APIRequest, server: ServerContext) -> EndpointReply {
        var requestedWait: Duration?
        if let text = request.query["wait"] {
            guard let seconds = Double(text), seconds >= 0, seconds.isFinite else {
                return .response(.error(.badRequest, .badRequest, "wait must be a number of seconds"))
            }
            requestedWait = min(.milliseconds(Int64(min(seconds, 86_400) * 1000)), server.limits.maximumRefreshWait)
        }
        let wait = requestedWait
        let scheduler = server.scheduler
        let origin = request.client.origin
        let waits = server.refreshWaits
        let grant = request.client.grant
        let ttl = server.ttl
        let store = server.store
        return .deferred(
            DeferredResponse(answerAtShutdown: shutdownAnswer, waits: waits) { eventLoop in
                let answer = await RefreshAnswer.obtain(
                    scheduler: scheduler, origin: origin, wait: wait, timer: eventLoop, waits: waits)
                return response(to: answer, waited: wait != nil) { result in
                    AttributeView(
                        served: ServedResult(result: result, obtainedAt: .now), grant: grant, ttl: ttl,
                        state: store.powerState)
                }
            })
    }

    static func response(
        to answer: RefreshAnswer, waited: Bool, view: (LocationResult) -> AttributeView
    ) -> APIResponse {
        switch answer.outcome {
        case .refused(let retryAfter):
            // Whole seconds, rounded up: a client that waits that long finds a token.
            let seconds = max(1, retryAfter.components.seconds + (retryAfter.components.attoseconds > 0 ? 1 : 0))
            return .error(
                .tooManyRequests, .refreshRefused, "the refresh budget is spent; a token comes back in \(seconds) s",
                extraHeaders: [("retry-after", String(seconds))])
        case .accepted, .joined:
            guard waited else { return .json(RefreshDocument(outcome: answer.outcome), status: .accepted) }
            switch answer.result {
            case .some(.success(let result)):
                return APIResponse(status: .ok, body: AttributeFormat.json.render(view(result).answer), contentType: "application/json")
            case .some(.failure(let failure)):
                return .error(.serviceUnavailable, .refreshFailed, "\(failure)")
            case .none:
                return .json(RefreshDocument(outcome: answer.outcome, stillRunning: true), status: .accepted)
            }
        }
    }
}
