import GeoAttrModel
import NIOCore
import NIOHTTP1
import GeoAttrSettings

/// Answers a request the decoder cannot parse with the API's JSON error (431 for a head over
/// the limit, 400 otherwise), then closes; any other error closes at once.
///
/// In the place of NIO's `HTTPServerProtocolErrorHandler`, and in its shape (it answers only
/// when no answer is owed): NIO's answers every parser error with an empty 400, and clients read
/// the error code and message in the body. Whether an answer is owed is the connection's state
/// (`ConnectionStateMachine`), asked through `answerOwed`: this handler sees no part of a
/// request or an answer, so that none of them crosses it.
final class ProtocolErrorResponder: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let limits: ServerLimits
    private let metrics: ServerMetrics
    private let answerOwed: () -> Bool
    /// An error was answered: no second answer may start.
    private var answered = false

    init(limits: ServerLimits, metrics: ServerMetrics, answerOwed: @escaping () -> Bool) {
        self.limits = limits
        self.metrics = metrics
        self.answerOwed = answerOwed
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        switch error {
        case HTTPParserError.headerOverflow:
            let message = "request head larger than \(limits.maximumHeadBytes) bytes"
            answer(.error(.requestHeaderFieldsTooLarge, .headersTooLarge, message), context)
        case is HTTPParserError:
            answer(.error(.badRequest, .badRequest, "malformed HTTP request"), context)
        default:
            context.close(promise: nil)
        }
    }

    /// Answers once, if nothing else is being answered, then closes.
    private func answer(_ response: APIResponse, _ context: ChannelHandlerContext) {
        guard !answered, !answerOwed() else {
            context.close(promise: nil)
            return
        }
        answered = true
        let closing = response.closingConnection()
        context.write(wrapOutboundOut(.head(closing.head)), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(closing.bodyBuffer))), promise: nil)
        metrics.request(endpoint: "invalid", status: Int(closing.status.code))
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in channel.close(promise: nil) }
    }
}
