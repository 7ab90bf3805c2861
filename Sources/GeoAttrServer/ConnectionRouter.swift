import CoreMetrics
import GeoAttrModel
import NIOCore
import NIOHTTP1
import GeoAttrSettings

/// One connection's answers through the endpoint table: writes the endpoint's response, or
/// waits for a deferred one, or starts a watch stream, and counts every answer.
///
/// Called by the connection's `ConnectionStateHandler` with each whole request, and writing
/// through it, as Hummingbird's channel handler calls its responder: not a handler of its own, so
/// that a request and the three parts of its answer cross no more of the pipeline than the
/// connection's state must see.
final class ConnectionRouter {
    private let server: ServerContext
    private let table: [Endpoint]
    /// A deferred answer that shutdown may give early, and the endpoint it counts under.
    private var interruptible: (answer: APIResponse, endpoint: String)?
    /// The request counter used last: a poller hits the same endpoint and status every time.
    private var lastCounter: (endpoint: String, status: Int, counter: CoreMetrics.Counter)?

    init(server: ServerContext, table: [Endpoint]) {
        self.server = server
        self.table = table
    }

    func answer(_ request: APIRequest, on connection: ConnectionStateHandler, _ context: ChannelHandlerContext) {
        let routed = EndpointRouter.route(request, in: table, server: server)
        switch routed.reply {
        case .response(let response):
            write(response, endpoint: routed.endpoint, on: connection, context)
        case .deferred(let deferred):
            answerLater(deferred, endpoint: routed.endpoint, on: connection, context)
        case .watch:
            startWatch(grant: request.client.grant, lastEventID: WatchStream.lastEventID(of: request), on: connection, context)
        }
    }

    /// The server is shutting down: a deferred answer that has one for this moment gives it now,
    /// cleanly, since what it waits for will not be awaited.
    func quiesce(on connection: ConnectionStateHandler, _ context: ChannelHandlerContext) {
        guard let (answer, endpoint) = interruptible else { return }
        interruptible = nil
        write(answer, endpoint: endpoint, on: connection, context)
    }

    func connectionClosed() {
        interruptible = nil
    }

    private func answerLater(
        _ deferred: DeferredResponse, endpoint: String, on connection: ConnectionStateHandler, _ context: ChannelHandlerContext
    ) {
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
            self.write(response, endpoint: endpoint, on: connection, context)
        }
        // After the answer is written: shutdown waits for this before it stops the loops.
        promise.futureResult.assumeIsolated().whenComplete { _ in deferred.waits?.requestEnded() }
    }

    private func startWatch(
        grant: Grant, lastEventID: UInt64?, on connection: ConnectionStateHandler, _ context: ChannelHandlerContext
    ) {
        // Pipelined behind a request that closed the connection: nobody is left to watch.
        guard context.channel.isActive else { return }
        let stream = WatchStream(
            channel: context.channel, store: server.store, grant: grant, ttl: server.ttl,
            heartbeat: server.limits.heartbeatInterval, lastEventID: lastEventID)
        connection.streamStarted(stream)
        var headers = HTTPHeaders()
        headers.add(name: "content-type", value: "text/event-stream; charset=utf-8")
        headers.add(name: "cache-control", value: "no-cache")
        connection.send(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers)), context)
        // Before any event: the stream's own events are written from the loop after this returns.
        WatchStream.write("retry: \(WatchStream.reconnectionDelayMilliseconds)\n\n", to: context.channel)
        server.metrics.request(endpoint: "watch", status: 200)
        // A stream's answer never ends: reading goes on, so that the client's EOF ends the stream
        // at once and a request sent after the watch closes the connection (instead of the
        // client blocking on a full socket buffer, or the stream outliving the client's
        // half-close until the next heartbeat fails).
        connection.handleHeldReads(context)
        if server.connections.isShuttingDown { stream.finish() }
    }

    private func write(
        _ response: APIResponse, endpoint: String, on connection: ConnectionStateHandler, _ context: ChannelHandlerContext
    ) {
        connection.send(.head(response.head), endsConnection: response.endsConnection, context)
        if response.bodyBuffer.readableBytes > 0 {
            connection.send(.body(.byteBuffer(response.bodyBuffer)), context)
        }
        count(endpoint: endpoint, status: Int(response.status.code))
        // The common keep-alive path: no completion callback to allocate per request.
        connection.send(.end(nil), context)
        connection.flush(context: context)
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
