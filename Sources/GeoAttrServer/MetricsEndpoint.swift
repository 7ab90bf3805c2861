import GeoAttrCore
import GeoAttrModel
import NIOHTTP1
import Prometheus

/// `GET /metrics`: the Prometheus exposition, when the daemon has a registry.
enum MetricsEndpoint {
    static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    static func answer(_ request: APIRequest, server: ServerContext) -> EndpointReply {
        guard let registry = server.registry else {
            return .response(.error(.notFound, .notFound, "metrics are not enabled"))
        }
        // Gauges that only mean something at the moment of the scrape.
        if let served = server.store.served {
            MetricsPublisher.recordCacheAge(served.age())
        }
        MetricsPublisher.recordUpdateSubscribers(server.store.updateSubscriberCount)
        server.buildInfo.record(indexVersion: server.store.status.index.versionInService, in: registry)
        return .response(APIResponse(status: .ok, body: registry.emitToBuffer(), contentType: contentType))
    }
}
