import GeoAttrModel
import NIOHTTP1

/// One complete answer: status, headers in the order they are sent, and the body bytes.
/// `connection: close` is not in `headers` unless the answer itself ends the connection: the
/// connection's state adds it when something else (a reload, shutdown, the client) does.
struct APIResponse: Sendable, Equatable {
    var status: HTTPResponseStatus
    var headers: HTTPHeaders
    var body: [UInt8]

    /// `content-type`, `content-length`, `etag`, then `extraHeaders`. `sendsBody: false` (HEAD):
    /// the length of `body` is announced and nothing is sent.
    init(
        status: HTTPResponseStatus, body: [UInt8], contentType: String?, etag: String? = nil,
        extraHeaders: [(String, String)] = [], sendsBody: Bool = true
    ) {
        var headers = HTTPHeaders()
        if let contentType { headers.add(name: "content-type", value: contentType) }
        headers.add(name: "content-length", value: String(body.count))
        if let etag { headers.add(name: "etag", value: etag) }
        for (name, value) in extraHeaders { headers.add(name: name, value: value) }
        self.status = status
        self.headers = headers
        self.body = sendsBody ? body : []
    }

    static func json(_ value: some Encodable, status: HTTPResponseStatus = .ok) -> APIResponse {
        APIResponse(status: status, body: APIJSON.encode(value), contentType: "application/json")
    }

    /// Every error answer: the status and a JSON `{"error": code, "message": message}`.
    static func error(
        _ status: HTTPResponseStatus, _ code: APIErrorCode, _ message: String, extraHeaders: [(String, String)] = []
    ) -> APIResponse {
        APIResponse(
            status: status, body: APIJSON.encode(APIErrorBody(error: code, message: message)),
            contentType: "application/json", extraHeaders: extraHeaders)
    }

    /// The same answer, ending its connection.
    func closingConnection() -> APIResponse {
        var copy = self
        copy.headers.add(name: "connection", value: "close")
        return copy
    }
}
