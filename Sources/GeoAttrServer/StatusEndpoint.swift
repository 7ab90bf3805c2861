import GeoAttrModel
/// `GET /v1/status`: the scheduler's and the store's state, location data cut to the grant.
enum StatusEndpoint {
    static func answer(_ request: APIRequest, server: ServerContext) -> EndpointReply {
        .response(.json(StatusDocument(server, grant: request.client.grant)))
    }
}
