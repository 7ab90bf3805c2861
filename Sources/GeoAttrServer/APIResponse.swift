import GeoAttrModel
import NIOCore
import NIOHTTP1

/// One complete answer: its head (status, headers in the order they are sent) and its body, both
/// in the form the channel writes, so that an answer made once (a cached attributes answer) is
/// written again and again without building a header or copying a byte.
/// `connection: close` is not in the headers unless the answer itself ends the connection: the
/// connection's state adds it when something else (a reload, shutdown, the client) does.
struct APIResponse: Sendable, Equatable {
    private(set) var head: HTTPResponseHead
    private(set) var bodyBuffer: ByteBuffer
    /// The `etag` header's value, kept beside the headers so that a conditional request is
    /// answered without searching them.
    let etag: String?
    /// The answer says `connection: close` itself (`closingConnection()`), kept beside the
    /// headers for the same reason.
    private(set) var endsConnection = false

    var status: HTTPResponseStatus { head.status }
    var headers: HTTPHeaders { head.headers }
    var body: [UInt8] { Array(bodyBuffer.readableBytesView) }

    /// `content-type`, `content-length`, `etag`, then `extraHeaders`.
    init(
        status: HTTPResponseStatus, body: [UInt8], contentType: String?, etag: String? = nil,
        extraHeaders: [(String, String)] = []
    ) {
        var headers = HTTPHeaders()
        headers.reserveCapacity(3 + extraHeaders.count)
        if let contentType { headers.add(name: "content-type", value: contentType) }
        headers.add(name: "content-length", value: String(body.count))
        if let etag { headers.add(name: "etag", value: etag) }
        self.etag = etag
        for (name, value) in extraHeaders { headers.add(name: name, value: value) }
        head = HTTPResponseHead(version: .http1_1, status: status, headers: headers)
        bodyBuffer = ByteBuffer(bytes: body)
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
        copy.head.headers.add(name: "connection", value: "close")
        copy.endsConnection = true
        return copy
    }

    /// The same head, no body (`HEAD`): the length of the body is still announced.
    func withoutBody() -> APIResponse {
        var copy = self
        // Moves the struct's index only: the cached storage is neither copied nor changed.
        copy.bodyBuffer.moveReaderIndex(forwardBy: copy.bodyBuffer.readableBytes)
        return copy
    }
}
