import NIOHTTP1

/// The API: every method and path the server answers, what each needs, and who answers it.
/// Routing, access checks, 404 and 405 all read this one table.
enum EndpointTable {
    static let endpoints: [Endpoint] = [
        Endpoint(method: .GET, path: "/v1/attributes", name: "attributes", access: .read, handler: AttributesEndpoint.answer),
        Endpoint(method: .HEAD, path: "/v1/attributes", name: "attributes", access: .read, handler: AttributesEndpoint.answer),
        Endpoint(method: .GET, path: "/v1/status", name: "status", access: .read, handler: StatusEndpoint.answer),
        Endpoint(
            method: .POST, path: "/v1/refresh", name: "refresh", access: .mutate(action: "force a refresh"),
            handler: RefreshEndpoint.answer),
        Endpoint(
            method: .PUT, path: "/v1/state", name: "state", access: .mutate(action: "change the state"),
            handler: StateEndpoint.answer),
        Endpoint(method: .GET, path: "/v1/watch", name: "watch", access: .read, handler: { _, _ in .watch }),
        // No location data in it: every client may scrape it.
        Endpoint(method: .GET, path: "/metrics", name: "metrics", access: .anyone, handler: MetricsEndpoint.answer),
    ]

    /// The metrics socket's table (`api.metrics_socket`): the API's own `/metrics` rows and
    /// nothing else, so that it answers exactly as the API does there and 404 everywhere else.
    static let metricsOnly: [Endpoint] = endpoints.filter { $0.path == "/metrics" }
}
