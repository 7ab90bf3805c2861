import CoreMetrics
import GeoAttrModel
import NIOCore
import NIOHTTP1
import GeoAttrSettings

/// Answers each request through the endpoint table: writes the endpoint's response, or waits
/// for a deferred one, or starts a watch stream, and counts every answer.
final class RouterHandler: ChannelInboundHandler {
    typealias InboundIn = APIRequest
    typealias OutboundOut = HTTPServerResponsePart

    private let server: ServerContext
    private let table: [Endpoint]
    /// A deferred answer that shutdown may give early, and the endpoint it counts under.
    private var interruptible: (answer: APIResponse, endpoint: String)?
    /// The request counter used last: a poller hits the same endpoint and status every time.
    private var lastCounter: (endpoint: String, status: Int, counter: CoreMetrics.Counter)?

    init(server: ServerContext, table: [Endpoint] = EndpointTable.endpoints) {
        self.server = server
        self.table = table
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let request = unwrapInboundIn(data)
        let routed = EndpointRouter.route(request, in: table, server: server)
        switch routed.reply {
        case .response(let response):
            write(response, endpoint: routed.endpoint, context)
        case .deferred(let deferred):
            answerLater(deferred, endpoint: routed.endpoint, context)
        case .watch:
            startWatch(grant: request.client.grant, lastEventID: WatchStream.lastEventID(of: request), context)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        interruptible = nil
        context.fireChannelInactive()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard event is ChannelShouldQuiesceEvent else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        // Answered now, cleanly: what it waits for will not be awaited.
        if let (answer, endpoint) = interruptible {
            interruptible = nil
            write(answer, endpoint: endpoint, context)
        }
    }

    private func answerLater(_ deferred: DeferredResponse, endpoint: String, _ context: ChannelHandlerContext) {
        let eventLoop = context.eventLoop
        let promise = eventLoop.makePromise(of: APIResponse.self)
        deferred.waits?.requestStarted()
        if let answer = deferred.answerAtShutdown { interruptible = (answer, endpoint) }
        promise.completeWithTask { await deferred.work(eventLoop) }
        promise.futureResult.assumeIsolated().whenSuccess { response in
            if deferred.answerAtShutdown != nil {
                // Already answered (shutdown) or the connection is gone.
                guard self.interruptible != nil else { return }
                self.interruptible = nil
            }
            self.write(response, endpoint: endpoint, context)
        }
        // After the answer is written: shutdown waits for this before it stops the loops.
        promise.futureResult.assumeIsolated().whenComplete { _ in deferred.waits?.requestEnded() }
    }

    private func startWatch(grant: Grant, lastEventID: UInt64?, _ context: ChannelHandlerContext) {
        // Pipelined behind a request that closed the connection: nobody is left to watch.
        guard context.channel.isActive else { return }
        let stream = WatchStream(
            channel: context.channel, store: server.store, grant: grant, ttl: server.ttl,
            heartbeat: server.limits.heartbeatInterval, lastEventID: lastEventID)
        context.triggerUserOutboundEvent(WatchStartedEvent(stream: stream), promise: nil)
        var headers = HTTPHeaders()
        headers.add(name: "content-type", value: "text/event-stream; charset=utf-8")
        headers.add(name: "cache-control", value: "no-cache")
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers))), promise: nil)
        // Before any event: the stream's own events are written from the loop after this returns.
        WatchStream.write("retry: \(WatchStream.reconnectionDelayMilliseconds)\n\n", to: context.channel)
        server.metrics.request(endpoint: "watch", status: 200)
        // NIO's pipelining assistant stops reading while a response is in flight, and this one
        // never ends: without it the connection goes on reading, so the client's EOF ends the
        // stream at once and a request sent after the watch closes the connection (instead of
        // the client blocking on a full socket buffer, or the stream outliving the client's
        // half-close until the next heartbeat fails).
        let pipeline = context.pipeline.syncOperations
        if let assistant = try? pipeline.handler(type: HTTPServerPipelineHandler.self) {
            pipeline.removeHandler(assistant, promise: nil)
        }
        if server.connections.isShuttingDown { stream.finish() }
    }

    private func write(_ response: APIResponse, endpoint: String, _ context: ChannelHandlerContext) {
        context.write(wrapOutboundOut(.head(response.head)), promise: nil)
        if response.bodyBuffer.readableBytes > 0 {
            context.write(wrapOutboundOut(.body(.byteBuffer(response.bodyBuffer))), promise: nil)
        }
        count(endpoint: endpoint, status: Int(response.status.code))
        // The common keep-alive path: no completion callback to allocate per request.
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }

    private func count(endpoint: String, status: Int) {
        if let last = lastCounter, last.endpoint == endpoint, last.status == status {
            last.counter.increment()
            return
        }
        let counter = server.metrics.counter(endpoint: endpoint, status: status)
        counter.increment()
        lastCounter = (endpoint, status, counter)
    }
}
