import CoreMetrics
import GeoAttrModel
import NIOCore
import NIOHTTP1
import Synchronization
import GeoAttrSettings

/// One client connection in the pipeline, after the HTTP codec: who the client is and what it
/// is granted (judged again when the access policy changes), its place in the connection
/// registry, and its `ConnectionStateMachine`, fed every part read and written, whose actions it
/// performs: whole `APIRequest`s for its `ConnectionRouter`, the head and idle deadlines,
/// keep-alive or close, the end of a watch stream, the answer to a request that cannot be parsed
/// (`ProtocolErrorAnswer`).
final class ConnectionStateHandler: ChannelDuplexHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private let server: ServerContext
    private let timeouts: ConnectionTimeouts
    private var client: APIClient
    /// The policy version `client.grant` was judged under.
    private var grantVersion: UInt64
    private var machine: ConnectionStateMachine
    private let router: ConnectionRouter
    private var watch: WatchStream?
    private var deadline: ConnectionDeadline?
    private var handlingHeldReads = false

    init(server: ServerContext, peer: PeerIdentity, timeouts: ConnectionTimeouts, table: [Endpoint]) {
        self.server = server
        self.timeouts = timeouts
        router = ConnectionRouter(server: server, table: table)
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
        router.connectionClosed()
        server.connections.remove(context.channel)
        server.metrics.connectedClients.record(server.connections.count)
        context.fireChannelInactive()
    }

    // MARK: Reading

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = unwrapInboundIn(data)
        guard !machine.hold(.part(part)) else { return }
        handle(part, context)
    }

    private func handle(_ part: HTTPServerRequestPart, _ context: ChannelHandlerContext) {
        switch part {
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
        if !context.channel.isWritable {
            // What is queued must reach the socket for the client to take it.
            context.flush()
        } else if machine.resumesReading(writable: true) {
            context.read()
        }
        // As it is after the flush.
        perform(machine.writabilityChanged(writable: context.channel.isWritable), context)
        watch?.writabilityChanged()
        context.fireChannelWritabilityChanged()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        switch event {
        case is ChannelShouldQuiesceEvent:
            perform(machine.quiesce(), context)
            // An answer that waits on the scheduler may be given now.
            router.quiesce(on: self, context)
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

    /// A part the decoder could not parse: answered, or the connection closed
    /// (`ConnectionStateMachine.protocolErrorCaught`).
    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // In its place among the requests: after the answers owed to those before it.
        if let parserError = error as? HTTPParserError, machine.hold(.parserError(parserError)) { return }
        answerProtocolError(error, context)
    }

    private func answerProtocolError(_ error: any Error, _ context: ChannelHandlerContext) {
        guard let response = ProtocolErrorAnswer.response(to: error, limits: server.limits),
            machine.protocolErrorCaught() == .answerThenClose
        else {
            context.close(promise: nil)
            return
        }
        // Past the machine's bookkeeping of answers: this one answers no request it forwarded.
        context.write(wrapOutboundOut(.head(response.head)), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(response.bodyBuffer))), promise: nil)
        server.metrics.request(endpoint: "invalid", status: Int(response.status.code))
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in channel.close(promise: nil) }
    }

    // MARK: Writing

    /// A part of an answer written by the router, from this handler's place in the pipeline.
    /// `endsConnection`: a head that says `connection: close` itself (`APIResponse` knows).
    func send(_ part: HTTPServerResponsePart, endsConnection: Bool = false, _ context: ChannelHandlerContext) {
        write(part, wrapped: nil, endsConnection: endsConnection, promise: nil, context)
    }

    /// A part written through the pipeline: an event stream's, which writes to its channel.
    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let part = unwrapOutboundIn(data)
        var endsConnection = false
        if case .head(let head) = part { endsConnection = head.headers.contains(name: "connection") }
        write(part, wrapped: data, endsConnection: endsConnection, promise: promise, context)
    }

    /// `wrapped`: the part as it came through the pipeline, passed on as it is unless changed.
    private func write(
        _ part: HTTPServerResponsePart, wrapped: NIOAny?, endsConnection: Bool, promise: EventLoopPromise<Void>?,
        _ context: ChannelHandlerContext
    ) {
        let action: ConnectionStateMachine.WriteAction
        switch part {
        case .head(let head):
            action = machine.responseHeadWritten(endsConnection: endsConnection)
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
        let data = wrapped ?? wrapOutboundOut(part)
        if action == .writeThenClose {
            let channel = context.channel
            let written = promise ?? context.eventLoop.makePromise()
            written.futureResult.whenComplete { _ in channel.close(promise: nil) }
            context.write(data, promise: written)
        } else {
            context.write(data, promise: promise)
        }
        if case .end = part { handleHeldReads(context) }
    }

    /// The answer in flight ended (or became a stream): what was read meanwhile is handled, in
    /// order, until one of it is owed an answer again; then reading resumes if it may.
    func handleHeldReads(_ context: ChannelHandlerContext) {
        // A held request answered at once ends its answer inside this loop: the loop goes on
        // with the next, instead of a call one level deeper for each.
        guard !handlingHeldReads else { return }
        handlingHeldReads = true
        defer { handlingHeldReads = false }
        while let held = machine.nextHeld() {
            switch held {
            case .part(let part): handle(part, context)
            case .parserError(let error): answerProtocolError(error, context)
            }
        }
        if machine.resumesReading(writable: context.channel.isWritable) { context.read() }
    }

    func read(context: ChannelHandlerContext) {
        if machine.readRequested(writable: context.channel.isWritable) { context.read() }
    }

    func flush(context: ChannelHandlerContext) {
        context.flush()
        perform(machine.flushed(writable: context.channel.isWritable), context)
    }

    /// The router started an event stream as the answer.
    func streamStarted(_ stream: WatchStream) {
        watch = stream
        machine.watchStarted()
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
            router.answer(apiRequest, on: self, context)
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
}
