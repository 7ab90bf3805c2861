import CoreMetrics
import GeoAttrModel
import NIOCore
import NIOHTTP1
import Synchronization
import GeoAttrSettings

/// One client connection's state in the pipeline: who the client is and what it is granted
/// (judged again when the access policy changes), its place in the connection registry, and
/// its `ConnectionStateMachine`, fed every part read and written, whose actions it performs:
/// whole `APIRequest`s for the router, the head and idle deadlines, keep-alive or close, the
/// end of a watch stream.
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
    private var machine: ConnectionStateMachine
    private var watch: WatchStream?
    private var deadline: ConnectionDeadline?

    init(server: ServerContext, peer: PeerIdentity, timeouts: ConnectionTimeouts) {
        self.server = server
        self.timeouts = timeouts
        let (grant, version) = server.grant(for: peer)
        client = APIClient(peer: peer, grant: grant)
        grantVersion = version
        machine = ConnectionStateMachine(maximumBodyBytes: server.limits.maximumBodyBytes)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        // The deadline is the handler's; the context it holds is let go with it when the
        // connection goes (channelInactive, handlerRemoved).
        deadline = ConnectionDeadline(eventLoop: context.eventLoop) { [unowned self] kind in self.deadlinePassed(kind, context) }
        perform(machine.connectionStarted(), context)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
    }

    func channelInactive(context: ChannelHandlerContext) {
        machine.closed()
        deadline?.cancel()
        deadline = nil
        watch = nil
        server.connections.remove(context.channel)
        server.metrics.connectedClients.record(server.connections.count)
        context.fireChannelInactive()
    }

    /// A request was read whose answer has not ended (an event stream's never does).
    var answerOwed: Bool { machine.answerOwed }

    // MARK: Reading

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            perform(machine.headReceived(head), context)
        case .body(let buffer):
            machine.bodyReceived(buffer)
        case .end:
            perform(machine.endReceived(), context)
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        context.flush()
        perform(machine.readCompleted(), context)
        context.fireChannelReadComplete()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        perform(machine.writabilityChanged(writable: context.channel.isWritable), context)
        watch?.writabilityChanged()
        context.fireChannelWritabilityChanged()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        switch event {
        case is ChannelShouldQuiesceEvent:
            perform(machine.quiesce(), context)
            // An answer that waits on the scheduler may be given now.
            context.fireUserInboundEventTriggered(event)
        case is AccessPolicyChangedEvent:
            judgeAgain(context, idleCloses: true)
        default:
            context.fireUserInboundEventTriggered(event)
        }
    }

    /// Judges the client again under the current policy: a changed grant ends what was granted
    /// under the old one (`ConnectionStateMachine.grantChanged`).
    private func judgeAgain(_ context: ChannelHandlerContext, idleCloses: Bool) {
        guard server.policyVersion.load(ordering: .sequentiallyConsistent) != grantVersion else { return }
        let (grant, version) = server.grant(for: client.peer)
        grantVersion = version
        guard grant != client.grant else { return }
        let seesTheSame = grant.level == client.grant.level && grant.coordinateDecimals == client.grant.coordinateDecimals
        client.grant = grant
        perform(machine.grantChanged(seesTheSame: seesTheSame, idleCloses: idleCloses), context)
    }

    // MARK: Writing

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let action: ConnectionStateMachine.WriteAction
        switch unwrapOutboundIn(data) {
        case .head(let head):
            action = machine.responseHeadWritten(endsConnection: head.headers.contains(name: "connection"))
            if action == .writeClosingHead {
                var closing = head
                closing.headers.add(name: "connection", value: "close")
                context.write(wrapOutboundOut(.head(closing)), promise: promise)
                return
            }
        case .body:
            action = .write
        case .end:
            action = machine.responseEndWritten()
        }
        guard action == .writeThenClose else {
            context.write(data, promise: promise)
            return
        }
        let channel = context.channel
        let written = promise ?? context.eventLoop.makePromise()
        written.futureResult.whenComplete { _ in channel.close(promise: nil) }
        context.write(data, promise: written)
    }

    func flush(context: ChannelHandlerContext) {
        context.flush()
        perform(machine.flushed(writable: context.channel.isWritable), context)
    }

    func triggerUserOutboundEvent(context: ChannelHandlerContext, event: Any, promise: EventLoopPromise<Void>?) {
        guard let started = event as? WatchStartedEvent else {
            context.triggerUserOutboundEvent(event, promise: promise)
            return
        }
        watch = started.stream
        machine.watchStarted()
        promise?.succeed()
    }

    // MARK: Actions

    private func perform(_ action: ConnectionStateMachine.Action, _ context: ChannelHandlerContext) {
        switch action {
        case .none:
            break
        case .forwardRequest(let request):
            deadline?.clear()
            // A reload may have changed what this client may do since its last request.
            judgeAgain(context, idleCloses: false)
            let apiRequest = APIRequest(head: request.head, body: request.body, bodyTooLarge: request.bodyTooLarge, client: client)
            context.fireChannelRead(wrapInboundOut(apiRequest))
        case .armHeadDeadline:
            deadline?.set(in: timeouts.head, kind: .head)
        case .armIdleDeadline:
            deadline?.set(in: timeouts.idle, kind: .idle)
        case .clearDeadline:
            deadline?.clear()
        case .close:
            context.close(promise: nil)
        case .finishWatch(let reconnect):
            watch?.finish(reconnect: reconnect)
        }
    }

    /// A head that did not arrive in time, or an idle keep-alive connection: close. (No complete
    /// request exists to answer, and the HTTP pipeline would refuse a response without one.)
    private func deadlinePassed(_ kind: ConnectionDeadline.Kind, _ context: ChannelHandlerContext) {
        if kind == .head { server.metrics.request(endpoint: "invalid", status: 408) }
        context.close(promise: nil)
    }

    /// Tells the connection on `channel` to quiesce, with NIO's `ChannelShouldQuiesceEvent`
    /// delivered right before this handler: NIO's pipelining assistant, earlier in the pipeline,
    /// would take the event as its own and not pass it on (closing after its own notion of the
    /// answer in flight, and answering no waiting request early). On the channel's event loop.
    static func quiesce(_ channel: any Channel) {
        let pipeline = channel.pipeline.syncOperations
        guard let before = try? pipeline.context(handlerType: ProtocolErrorResponder.self) else { return }
        before.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent())
    }
}

/// Sent from the router to the connection's state when `GET /v1/watch` starts its stream.
struct WatchStartedEvent {
    var stream: WatchStream
}
