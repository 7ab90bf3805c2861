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
        // A poller's plain GET has no query: no lookup, no string to match.
        guard let format = request.query.isEmpty ? .json : AttributeFormat(rawValue: request.query["format"] ?? "json") else {
            return .error(.badRequest, .badRequest, "format must be \(AttributeFormat.choices)")
        }
        let grant = request.client.grant
        let ttl = server.ttl
        // An answer made before, found without copying the result it was made from.
        let (mark, markState) = server.store.servedMarkAndPowerState
        let cached = mark.flatMap { mark in
            server.responses.cached(for: Self.cacheKey(mark, grant: grant, format: format, ttl: ttl, state: markState))
        }
        guard let response = cached ?? made(format: format, grant: grant, ttl: ttl, server: server) else {
            return .error(.serviceUnavailable, .noLocation, "no location yet: no fix, no cache and no static location")
        }
        let etag = response.etag
        if let match = request.head.headers.first(name: "if-none-match"), match == etag || match == "*" {
            return APIResponse(status: .notModified, body: [], contentType: nil, etag: etag)
        }
        return request.method == .HEAD ? response.withoutBody() : response
    }

    /// The answer for the result served now, made and kept; `nil` when nothing is served.
    private static func made(format: AttributeFormat, grant: Grant, ttl: Duration, server: ServerContext) -> APIResponse? {
        let (current, state) = server.store.servedAndPowerState
        guard let served = current else { return nil }
        let mark: ServedMark = (served.result.generation, served.obtainedAt)
        return server.responses.response(for: cacheKey(mark, grant: grant, format: format, ttl: ttl, state: state)) {
            let body = format.render(AttributeView(served: served, grant: grant, ttl: ttl, state: state).answer)
            return APIResponse(
                status: .ok, body: body, contentType: format.mediaType,
                etag: entityTag(generation: served.result.generation, grant: grant))
        }
    }

    private static func cacheKey(_ mark: ServedMark, grant: Grant, format: AttributeFormat, ttl: Duration, state: PowerState) -> ResponseCache.Key {
        let age = max(.zero, .now - mark.obtainedAt)
        return ResponseCache.Key(
            generation: mark.generation, level: grant.level, decimals: grant.coordinateDecimals, format: format,
            ageSeconds: age.components.seconds, stale: age >= ttl, state: state)
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
