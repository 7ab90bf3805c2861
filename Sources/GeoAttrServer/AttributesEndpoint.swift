import GeoAttrCore
import GeoAttrModel
import NIOHTTP1

/// `GET` and `HEAD /v1/attributes[?format=NAME]` (the names of `AttributeFormat`): the served attributes,
/// cut to the client's grant, with an entity tag for `if-none-match`.
enum AttributesEndpoint {
    static func answer(_ request: APIRequest, server: ServerContext) -> EndpointReply {
        .response(response(request, server: server))
    }

    static func response(_ request: APIRequest, server: ServerContext) -> APIResponse {
        guard let format = AttributeFormat(rawValue: request.query["format"] ?? "json") else {
            return .error(.badRequest, .badRequest, "format must be \(AttributeFormat.choices)")
        }
        let (current, state) = server.store.servedAndPowerState
        guard let served = current else {
            return .error(.serviceUnavailable, .noLocation, "no location yet: no fix, no cache and no static location")
        }
        let grant = request.client.grant
        let ttl = server.ttl
        let age = served.age()
        let key = ResponseCache.Key(
            generation: served.result.generation, level: grant.level, decimals: grant.coordinateDecimals, format: format,
            ageSeconds: age.components.seconds, stale: age >= ttl, state: state)
        let response = server.responses.response(for: key) {
            let body = format.render(AttributeView(served: served, grant: grant, ttl: ttl, state: state).answer)
            return APIResponse(
                status: .ok, body: body, contentType: format.mediaType,
                etag: entityTag(generation: served.result.generation, grant: grant))
        }
        let etag = response.headers.first(name: "etag")
        if let match = request.head.headers.first(name: "if-none-match"), match == etag || match == "*" {
            return APIResponse(status: .notModified, body: [], contentType: nil, etag: etag)
        }
        return request.method == .HEAD ? response.withoutBody() : response
    }

    /// The whole grant is in the tag: a client whose precision changed never gets a 304 for
    /// what it saw before.
    static func entityTag(generation: UInt64, grant: Grant) -> String {
        guard let decimals = grant.coordinateDecimals, Grant.levelsWithDecimals.contains(grant.level) else {
            return "\"\(generation)-\(grant.level.rawValue)\""
        }
        return "\"\(generation)-\(grant.level.rawValue)-d\(decimals)\""
    }
}
