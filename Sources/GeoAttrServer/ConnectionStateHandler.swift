import CoreMetrics
import GeoAttrModel
import NIOCore
import NIOHTTP1
import Synchronization
import GeoAttrSettings

/// The state of one client connection: who the client is and what it is granted (judged again
/// when the access policy changes), when its next request is due (head and idle deadlines),
/// whether the connection stays open after the answer in flight, and its place in the
/// connection registry. Turns the decoder's parts into whole `APIRequest`s.
final class ConnectionStateHandler: ChannelDuplexHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = APIRequest
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private let server: ServerContext
    private let timeouts: ConnectionTimeouts
    private var client: APIClient
    /// The policy version `client.grant` was judged under.
    private var grantVersion: UInt64
    /// The request being read: its head, and its body up to the limit.
    private var head: HTTPRequestHead?
    private var body: [UInt8] = []
    private var bodyTooLarge = false
    /// From a request's end until its answer's end.
    private var answering = false
    private var closeAfterResponse = false
    /// Whether anything was decoded since the last read completed: bytes that decoded to
    /// nothing are the start of a request, which must complete within the head timeout.
    private var decodedThisRead = false
    /// An answer ended since the last flush: the deadline moves once it is flushed.
    private var answerEndedUnflushed = false
    private var watch: WatchStream?
    private var deadline: ConnectionDeadline?

    init(server: ServerContext, peer: PeerIdentity, timeouts: ConnectionTimeouts) {
        self.server = server
        self.timeouts = timeouts
        let (grant, version) = server.grant(for: peer)
        client = APIClient(peer: peer, grant: grant)
        grantVersion = version
    }

    func handlerAdded(context: ChannelHandlerContext) {
        deadline = ConnectionDeadline(eventLoop: context.eventLoop)
        // A new connection must send its first request head in time, like any later one.
        expectRequest(context)
    }

    func channelInactive(context: ChannelHandlerContext) {
        deadline?.cancel()
        watch = nil
        server.connections.remove(context.channel)
        server.metrics.connectedClients.record(server.connections.count)
        context.fireChannelInactive()
    }

    // MARK: Reading

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        decodedThisRead = true
        switch unwrapInboundIn(data) {
        case .head where watch != nil:
            // A watch is the last request on its connection: its response never ends, so what
            // comes after it can never be answered.
            context.close(promise: nil)
        case .head(let requestHead):
            // The body must arrive within the head's deadline too: a body that trickles, or never
            // comes, would otherwise hold the connection (and a slot of api.max_connections) for ever.
            if deadline?.isHeadDue != true { expectRequest(context) }
            head = requestHead
            body = []
            bodyTooLarge = false
        case .body where watch != nil, .end where watch != nil:
            break
        case .body(var buffer):
            if body.count + buffer.readableBytes > server.limits.maximumBodyBytes {
                bodyTooLarge = true
            } else if let bytes = buffer.readBytes(length: buffer.readableBytes) {
                body += bytes
            }
        case .end:
            deadline?.clear()
            guard let requestHead = head else { return }
            head = nil
            answering = true
            // A reload may have changed what this client may do since its last request.
            judgeAgain(context, idleCloses: false)
            if !requestHead.isKeepAlive { closeAfterResponse = true }
            let request = APIRequest(head: requestHead, body: body, bodyTooLarge: bodyTooLarge, client: client)
            body = []
            context.fireChannelRead(wrapInboundOut(request))
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        context.flush()
        // Bytes that decoded to nothing yet: a new request started arriving, and must complete
        // within the head timeout. (A read that carried a whole request leaves the idle timer
        // its answer armed.)
        if !decodedThisRead, head == nil, !answering, watch == nil, deadline?.isHeadDue != true {
            expectRequest(context)
        }
        decodedThisRead = false
        context.fireChannelReadComplete()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if watch == nil, !answering, head == nil {
            // Answers backing up: the head timeout; taken again: back to the idle timeout.
            let writable = context.channel.isWritable
            if !writable, deadline?.isHeadDue != true {
                expectRequest(context)
            } else if writable, deadline?.isHeadDue == true {
                waitIdle(context)
            }
        }
        watch?.writabilityChanged()
        context.fireChannelWritabilityChanged()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        switch event {
        case is ServerShutdownEvent:
            closeAfterResponse = true
            if let watch {
                watch.finish()
            } else if !answering {
                context.close(promise: nil)
            }
            // An answer that waits on the scheduler may be given now.
            context.fireUserInboundEventTriggered(event)
        case is AccessPolicyChangedEvent:
            judgeAgain(context, idleCloses: true)
        default:
            context.fireUserInboundEventTriggered(event)
        }
    }

    /// Judges the client again under the current policy. A change ends what was granted under
    /// the old one: the connection closes after the answer in flight (or at once when idle), a
    /// watch ends.
    private func judgeAgain(_ context: ChannelHandlerContext, idleCloses: Bool) {
        guard server.policyVersion.load(ordering: .sequentiallyConsistent) != grantVersion else { return }
        let (grant, version) = server.grant(for: client.peer)
        grantVersion = version
        guard grant != client.grant else { return }
        let seesTheSame = grant.level == client.grant.level && grant.coordinateDecimals == client.grant.coordinateDecimals
        client.grant = grant
        // A stream shows what the grant lets the client see; access.mutate alone does not change it.
        if watch != nil, seesTheSame { return }
        closeAfterResponse = true
        if let watch {
            watch.finish(reconnect: true)
        } else if idleCloses, !answering, head == nil {
            context.close(promise: nil)
        }
    }

    // MARK: Writing

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(var responseHead) where watch == nil:
            if responseHead.headers.contains(name: "connection") {
                // The answer itself ends the connection (a request over a limit).
                closeAfterResponse = true
            } else if closeAfterResponse {
                responseHead.headers.add(name: "connection", value: "close")
            }
            context.write(wrapOutboundOut(.head(responseHead)), promise: promise)
        case .end where watch == nil:
            answering = false
            guard closeAfterResponse else {
                answerEndedUnflushed = true
                context.write(data, promise: promise)
                return
            }
            let channel = context.channel
            let written = promise ?? context.eventLoop.makePromise()
            written.futureResult.whenComplete { _ in channel.close(promise: nil) }
            context.write(data, promise: written)
        default:
            context.write(data, promise: promise)
        }
    }

    func flush(context: ChannelHandlerContext) {
        context.flush()
        guard answerEndedUnflushed else { return }
        answerEndedUnflushed = false
        // Idle, unless its answers are backing up: a client that does not take them is
        // holding the daemon's buffers, and gets the head timeout.
        if context.channel.isWritable {
            waitIdle(context)
        } else {
            expectRequest(context)
        }
    }

    func triggerUserOutboundEvent(context: ChannelHandlerContext, event: Any, promise: EventLoopPromise<Void>?) {
        guard let started = event as? WatchStartedEvent else {
            context.triggerUserOutboundEvent(event, promise: promise)
            return
        }
        // The stream's head passes as it is, and its end closes the connection by itself.
        watch = started.stream
        promise?.succeed()
    }

    // MARK: Deadlines

    private func expectRequest(_ context: ChannelHandlerContext) {
        deadline?.set(in: timeouts.head, kind: .head) { kind in self.deadlinePassed(kind, context) }
    }

    private func waitIdle(_ context: ChannelHandlerContext) {
        deadline?.set(in: timeouts.idle, kind: .idle) { kind in self.deadlinePassed(kind, context) }
    }

    /// A head that did not arrive in time, or an idle keep-alive connection: close. (No complete
    /// request exists to answer, and the HTTP pipeline would refuse a response without one.)
    private func deadlinePassed(_ kind: ConnectionDeadline.Kind, _ context: ChannelHandlerContext) {
        if kind == .head { server.metrics.request(endpoint: "invalid", status: 408) }
        context.close(promise: nil)
    }
}

/// Sent from the router to the connection's state when `GET /v1/watch` starts its stream.
struct WatchStartedEvent {
    var stream: WatchStream
}
