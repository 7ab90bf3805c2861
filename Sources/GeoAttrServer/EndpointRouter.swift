import GeoAttrModel
import NIOHTTP1
import GeoAttrSettings

/// Picks the endpoint for a request and checks the request against the limits and the
/// client's grant first. A plain function of the request and the table: no connection needed.
enum EndpointRouter {
    struct Routed: Sendable {
        /// The `endpoint` label the answer is counted under.
        var endpoint: String
        var reply: EndpointReply
    }

    static func route(_ request: APIRequest, in table: [Endpoint], server: ServerContext) -> Routed {
        // Indices, not rows: a row holds its handler and names, and is read where it lies.
        let atPath = table.firstIndex { $0.path == request.path }
        let name = atPath.map { table[$0].name } ?? "unknown"
        let pathAccess = atPath.map { table[$0].access } ?? unknownPathAccess(in: table)
        if let refusal = refusal(request, pathAccess: pathAccess, server: server) {
            return Routed(endpoint: name, reply: .response(refusal))
        }
        guard atPath != nil else {
            return Routed(endpoint: "unknown", reply: .response(.error(.notFound, .notFound, "no such endpoint: \(request.path)")))
        }
        guard let index = table.firstIndex(where: { $0.path == request.path && $0.method == request.method }) else {
            let message = "\(request.method) is not allowed on \(request.path)"
            // RFC 9110: a 405 names the methods the path takes.
            let allowed = table.filter { $0.path == request.path }.map { "\($0.method)" }.joined(separator: ", ")
            let refusal = APIResponse.error(.methodNotAllowed, .methodNotAllowed, message, extraHeaders: [("allow", allowed)])
            return Routed(endpoint: name, reply: .response(refusal))
        }
        if case .mutate(let action) = table[index].access, !request.client.grant.mayMutate {
            let message = "uid \(request.client.peer.uid) may not \(action); see access.mutate"
            return Routed(endpoint: name, reply: .response(.error(.forbidden, .forbidden, message)))
        }
        return Routed(endpoint: name, reply: table[index].handler(request, server))
    }

    /// What a path the table lacks asks of a client. Read access, so that a client that may see
    /// nothing cannot tell the API's paths from others; but where every path is open to anyone
    /// (the metrics socket's table) there is nothing to hide, and every client gets the 404.
    private static func unknownPathAccess(in table: [Endpoint]) -> AccessNeeded {
        table.allSatisfy { $0.access == .anyone } ? .anyone : .read
    }

    /// Limits first, then read access: a client that may see nothing learns nothing about the
    /// paths either (any path but one open to anyone is a 403 to it, not a 404).
    private static func refusal(_ request: APIRequest, pathAccess: AccessNeeded, server: ServerContext) -> APIResponse? {
        let limits = server.limits
        if request.head.uri.utf8.count > limits.maximumHeadBytes {
            return APIResponse.error(.requestHeaderFieldsTooLarge, .headersTooLarge, "request target too long").closingConnection()
        }
        if request.bodyTooLarge {
            let message = "request body larger than \(limits.maximumBodyBytes) bytes"
            return APIResponse.error(.payloadTooLarge, .bodyTooLarge, message).closingConnection()
        }
        if pathAccess != .anyone, request.client.grant.level == .none {
            let peer = request.client.peer
            let reason = server.refusal(for: peer)
            return .error(.forbidden, .forbidden, "uid \(peer.uid) may not read location data: \(reason)")
        }
        return nil
    }
}
