import GeoAttrModel
import NIOCore

/// Answers a connection that cannot be admitted with a 503, then closes it. Written as bytes:
/// no request has been read, and the HTTP pipeline answers only requests.
final class AdmissionRefusalHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private let refusal: ConnectionRegistry.Refusal

    init(refusal: ConnectionRegistry.Refusal) {
        self.refusal = refusal
    }

    func channelActive(context: ChannelHandlerContext) {
        let body = APIJSON.encode(Self.errorBody(refusal))
        var buffer = context.channel.allocator.buffer(capacity: 160 + body.count)
        buffer.writeString("HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nconnection: close\r\n")
        buffer.writeString("content-length: \(body.count)\r\n\r\n")
        buffer.writeBytes(body)
        let channel = context.channel
        context.writeAndFlush(NIOAny(buffer)).whenComplete { _ in channel.close(promise: nil) }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {}

    static func errorBody(_ refusal: ConnectionRegistry.Refusal) -> APIErrorBody {
        switch refusal {
        case .shuttingDown:
            APIErrorBody(error: .shuttingDown, message: "geoattrd is shutting down")
        case .tooManyConnections:
            APIErrorBody(error: .tooManyConnections, message: "too many connections; retry shortly")
        case .tooManyForUID(let uid):
            APIErrorBody(
                error: .tooManyConnections,
                message: "uid \(uid) holds too many connections (api.max_connections_per_uid); close some and retry")
        }
    }
}
