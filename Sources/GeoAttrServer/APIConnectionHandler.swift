import CoreMetrics
import FoundationEssentials
import GeoAttrCore
import GeoAttrModel
package import NIOCore
import NIOHTTP1
import Prometheus
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Sets up one accepted connection: admission, peer credentials, the HTTP/1 codec with the
/// header limit, and the API handler. (`package`: the HTTP fuzz harness sets up its connections
/// with it too.)
package enum ConnectionSetup {
    package static func configure(_ channel: any Channel, context: ServerContext) -> EventLoopFuture<Void> {
        // The peer's identity first (at once on an accepted socket): admission counts per uid.
        PeerIdentity.read(channel).flatMapThrowing { peer in
            try configure(channel, peer: peer, context: context)
        }
    }

    static func configure(_ channel: any Channel, peer: PeerIdentity, context: ServerContext) throws {
        let sync = channel.pipeline.syncOperations
        // Root and the daemon's own uid are not counted per uid: an operator must be able to
        // get in (geoattrctl doctor) when a client holds all its slots, and neither is a client
        // whose mistakes the limit contains. api.max_connections still bounds them.
        let exempt = peer.uid == 0 || peer.uid == context.policy.withLock { $0.daemonUID }
        if let refusal = context.connections.admit(
            channel, uid: exempt ? nil : peer.uid, limit: context.limits.maximumConnections,
            perUIDLimit: context.limits.maximumConnectionsPerUID)
        {
            // Over a limit (or shutting down): a clean 503 once the connection is active, then
            // close; the other clients keep going.
            try sync.addHandler(RejectingHandler(refusal: refusal))
            context.metrics.request(endpoint: "connect", status: 503)
            return
        }
        context.metrics.connectedClients.record(context.connections.count)
        // Stop reading from a client while its answers are not being read: NIO's pipelining
        // assistant takes the next request as soon as an answer is written, not sent, so a client
        // that pipelines requests and never reads made the daemon queue answers without bound
        // (1.4 GB in 20 s). Reading resumes when the queue drains below the low watermark.
        try sync.addHandler(BackPressureHandler())
        var limits = NIOHTTPDecoderLimitConfiguration()
        limits.maxHeaderListSize = context.limits.maximumHeadBytes
        limits.maxHeaderFieldSize = context.limits.maximumHeadBytes
        limits.maxHeaderFieldCount = 128
        // No outbound header validation: every response header is one this file writes from
        // constants and numbers (nothing a client sent is ever echoed into a header), and the
        // validator is one more handler that each of a response's three parts would cross.
        try sync.configureHTTPServerPipeline(
            withErrorHandling: false, withOutboundHeaderValidation: false, withEncoderConfiguration: .init(),
            withDecoderLimitConfiguration: limits)
        try sync.addHandler(APIConnectionHandler(context: context, peer: peer))
    }
}

/// Answers a connection that cannot be admitted with a 503, then closes it.
final class RejectingHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private let refusal: ConnectionRegistry.Refusal

    init(refusal: ConnectionRegistry.Refusal) {
        self.refusal = refusal
    }

    func channelActive(context: ChannelHandlerContext) {
        let error: APIErrorBody
        switch refusal {
        case .shuttingDown:
            error = APIErrorBody(error: .shuttingDown, message: "geoattrd is shutting down")
        case .tooManyConnections:
            error = APIErrorBody(error: .tooManyConnections, message: "too many connections; retry shortly")
        case .tooManyForUID(let uid):
            error = APIErrorBody(
                error: .tooManyConnections,
                message: "uid \(uid) holds too many connections (api.max_connections_per_uid); close some and retry")
        }
        let body = AttributeRenderer.encode(error)
        var buffer = context.channel.allocator.buffer(capacity: 160 + body.count)
        buffer.writeString("HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nconnection: close\r\n")
        buffer.writeString("content-length: \(body.count)\r\n\r\n")
        buffer.writeBytes(body)
        let channel = context.channel
        context.writeAndFlush(NIOAny(buffer)).whenComplete { _ in channel.close(promise: nil) }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {}
}

/// One client connection. Lives on its channel's event loop.
final class APIConnectionHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let context: ServerContext
    private let peer: PeerIdentity
    private var grant: Grant
    /// The policy version `grant` was judged under.
    private var grantVersion: UInt64
    private var head: HTTPRequestHead?
    private var body: [UInt8] = []
    private var bodyTooLarge = false
    private var busy = false
    private var closeAfterResponse = false
    /// A refresh that waits for its answer (shutdown answers it at once).
    private var refreshPending = false
    /// Whether anything was decoded since the last read completed: bytes that decoded to
    /// nothing are the start of a request, which must complete within the head timeout.
    private var decodedThisRead = false
    private var watch: WatchStream?
    /// One timer per connection, re-armed lazily: requests only move `deadline`, which is far
    /// cheaper than scheduling and cancelling a task per request.
    private var deadline: NIODeadline?
    private var deadlineIsHead = true
    private var timer: Scheduled<Void>?
    /// The last attributes answer this connection sent, ready to send again: a sidecar polls
    /// the same thing, and while nothing it could see changed, nothing is rendered or copied.
    private var cachedAnswer: (key: ResponseCache.Key, etag: String, head: HTTPResponseHead, body: ByteBuffer)?
    /// The request counter used last: a poller hits the same endpoint and status every time.
    private var lastCounter: (endpoint: String, status: Int, counter: CoreMetrics.Counter)?

    init(context: ServerContext, peer: PeerIdentity) {
        self.context = context
        self.peer = peer
        (grant, grantVersion) = context.grant(for: peer)
    }

    func handlerAdded(context channelContext: ChannelHandlerContext) {
        // A new connection must send its first request head in time, like any later one.
        armHeadTimer(channelContext)
    }

    /// Judges the client again under the current policy. A change ends what was granted under
    /// the old one: the connection closes after the answer in flight (or at once when idle), a
    /// watch ends. Returns whether the grant changed.
    @discardableResult
    private func judgeAgain(_ channelContext: ChannelHandlerContext, idleCloses: Bool) -> Bool {
        guard self.context.policyVersion.load(ordering: .sequentiallyConsistent) != grantVersion else { return false }
        let (newGrant, version) = self.context.grant(for: peer)
        grantVersion = version
        guard newGrant != grant else { return false }
        grant = newGrant
        closeAfterResponse = true
        if let watch {
            watch.finish()
        } else if idleCloses, !busy, head == nil {
            channelContext.close(promise: nil)
        }
        return true
    }

    func channelInactive(context channelContext: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        deadline = nil
        watch = nil
        refreshPending = false
        self.context.connections.remove(channelContext.channel)
        self.context.metrics.connectedClients.record(self.context.connections.count)
        channelContext.fireChannelInactive()
    }

    // MARK: Reading

    func channelRead(context channelContext: ChannelHandlerContext, data: NIOAny) {
        decodedThisRead = true
        switch unwrapInboundIn(data) {
        case .head where watch != nil:
            // A watch is the last request on its connection: its response never ends, so what
            // comes after it can never be answered.
            channelContext.close(promise: nil)
        case .head(let requestHead):
            // The body must arrive within the head's deadline too: a body that trickles, or never
            // comes, would otherwise hold the connection (and a slot of api.max_connections) for ever.
            if deadline == nil || !deadlineIsHead { armHeadTimer(channelContext) }
            head = requestHead
            body = []
            bodyTooLarge = false
        case .body where watch != nil, .end where watch != nil:
            break
        case .body(var buffer):
            if body.count + buffer.readableBytes > self.context.limits.maximumBodyBytes {
                bodyTooLarge = true
            } else if let bytes = buffer.readBytes(length: buffer.readableBytes) {
                body += bytes
            }
        case .end:
            deadline = nil
            guard let requestHead = head else { return }
            head = nil
            handle(requestHead, channelContext)
        }
    }

    func channelReadComplete(context channelContext: ChannelHandlerContext) {
        channelContext.flush()
        // Bytes that decoded to nothing yet: a new request started arriving, and must complete
        // within the head timeout. (A read that carried a whole request leaves the idle timer
        // its answer armed.)
        if !decodedThisRead, head == nil, !busy, watch == nil, deadline == nil || !deadlineIsHead {
            armHeadTimer(channelContext)
        }
        decodedThisRead = false
    }

    func channelWritabilityChanged(context channelContext: ChannelHandlerContext) {
        if watch == nil, !busy, head == nil {
            // Answers backing up: the head timeout; taken again: back to the idle timeout.
            if !channelContext.channel.isWritable, deadline == nil || !deadlineIsHead {
                armHeadTimer(channelContext)
            } else if channelContext.channel.isWritable, deadline != nil, deadlineIsHead {
                armIdleTimer(channelContext)
            }
        }
        watch?.writabilityChanged()
        channelContext.fireChannelWritabilityChanged()
    }

    func errorCaught(context channelContext: ChannelHandlerContext, error: any Error) {
        switch error {
        case HTTPParserError.headerOverflow:
            fail(channelContext, status: .requestHeaderFieldsTooLarge, code: .headersTooLarge,
                 message: "request head larger than \(self.context.limits.maximumHeadBytes) bytes", endpoint: "invalid")
        case is HTTPParserError:
            fail(channelContext, status: .badRequest, code: .badRequest, message: "malformed HTTP request", endpoint: "invalid")
        default:
            channelContext.close(promise: nil)
        }
    }

    /// A protocol error: answer once (if nothing is being answered), then close.
    private func fail(_ channelContext: ChannelHandlerContext, status: HTTPResponseStatus, code: APIErrorCode, message: String, endpoint: String) {
        guard !busy, watch == nil else {
            channelContext.close(promise: nil)
            return
        }
        closeAfterResponse = true
        busy = true
        respond(channelContext, status: status, body: AttributeRenderer.encode(APIErrorBody(error: code, message: message)),
                contentType: "application/json", endpoint: endpoint)
    }

    func userInboundEventTriggered(context channelContext: ChannelHandlerContext, event: Any) {
        if event is ServerShutdownEvent {
            closeAfterResponse = true
            if let watch {
                watch.finish()
            } else if refreshPending {
                // Answered now, cleanly: the fix it waits for will not be awaited.
                refreshPending = false
                error(channelContext, .serviceUnavailable, .shuttingDown, "geoattrd is shutting down; retry when it is back", "refresh")
            } else if !busy {
                channelContext.close(promise: nil)
            }
            return
        }
        if event is AccessPolicyChangedEvent {
            judgeAgain(channelContext, idleCloses: true)
            return
        }
        channelContext.fireUserInboundEventTriggered(event)
    }

    // MARK: Timers

    private func armHeadTimer(_ channelContext: ChannelHandlerContext) {
        setDeadline(in: self.context.limits.headTimeout, head: true, channelContext)
    }

    private func armIdleTimer(_ channelContext: ChannelHandlerContext) {
        setDeadline(in: self.context.limits.idleTimeout, head: false, channelContext)
    }

    private func setDeadline(in duration: Duration, head: Bool, _ channelContext: ChannelHandlerContext) {
        deadline = .now() + .nanoseconds(duration.nanosecondsValue)
        deadlineIsHead = head
        if timer == nil, let deadline { scheduleTimer(at: deadline, channelContext) }
    }

    private func scheduleTimer(at when: NIODeadline, _ channelContext: ChannelHandlerContext) {
        let loopBound = NIOLoopBound((self, channelContext), eventLoop: channelContext.eventLoop)
        timer = channelContext.eventLoop.scheduleTask(deadline: when) {
            let (handler, channelContext) = loopBound.value
            handler.timer = nil
            guard let deadline = handler.deadline else { return }
            if deadline > .now() {
                handler.scheduleTimer(at: deadline, channelContext)
                return
            }
            // A head that did not arrive in time, or an idle keep-alive connection: close. (No
            // complete request exists to answer, and the HTTP pipeline would refuse a response
            // without one.)
            if handler.deadlineIsHead { handler.context.metrics.request(endpoint: "invalid", status: 408) }
            channelContext.close(promise: nil)
        }
    }

    // MARK: Routing

    private func handle(_ requestHead: HTTPRequestHead, _ channelContext: ChannelHandlerContext) {
        busy = true
        // A reload may have changed what this client may do since its last request.
        judgeAgain(channelContext, idleCloses: false)
        if !requestHead.isKeepAlive { closeAfterResponse = true }
        let (path, query) = Self.split(requestHead.uri)
        let endpoint = Self.endpointName(path)
        if requestHead.uri.utf8.count > self.context.limits.maximumHeadBytes {
            closeAfterResponse = true
            return error(channelContext, .requestHeaderFieldsTooLarge, .headersTooLarge, "request target too long", endpoint)
        }
        if bodyTooLarge {
            closeAfterResponse = true
            return error(channelContext, .payloadTooLarge, .bodyTooLarge,
                         "request body larger than \(self.context.limits.maximumBodyBytes) bytes", endpoint)
        }
        guard grant.level > .none || path == "/metrics" else {
            return error(channelContext, .forbidden, .forbidden,
                         "uid \(peer.uid) gid \(peer.gid) may not read location data; see access.rules", endpoint)
        }
        switch (requestHead.method, path) {
        case (.GET, "/v1/attributes"), (.HEAD, "/v1/attributes"):
            attributes(requestHead, query: query, channelContext)
        case (.GET, "/v1/status"):
            respondJSON(channelContext, StatusDocument(self.context, grant: grant), endpoint: endpoint)
        case (.POST, "/v1/refresh"):
            refresh(query: query, channelContext)
        case (.PUT, "/v1/state"):
            setState(channelContext)
        case (.GET, "/v1/watch"):
            startWatch(channelContext)
        case (.GET, "/metrics"):
            metrics(channelContext)
        case (_, "/v1/attributes"), (_, "/v1/status"), (_, "/v1/refresh"), (_, "/v1/state"), (_, "/v1/watch"), (_, "/metrics"):
            error(channelContext, .methodNotAllowed, .methodNotAllowed, "\(requestHead.method) is not allowed on \(path)", endpoint)
        default:
            error(channelContext, .notFound, .notFound, "no such endpoint: \(path)", "unknown")
        }
    }

    private func attributes(_ requestHead: HTTPRequestHead, query: [String: String], _ channelContext: ChannelHandlerContext) {
        let formatName = query["format"] ?? "json"
        guard let format = AttributeFormat(rawValue: formatName) else {
            return error(channelContext, .badRequest, .badRequest, "format must be json, otel, env or prometheus", "attributes")
        }
        let (current, state) = self.context.store.servedAndPowerState
        guard let served = current else {
            return error(channelContext, .serviceUnavailable, .noLocation,
                         "no location yet: no fix, no cache and no static location", "attributes")
        }
        let ttl = self.context.ttl
        let age = served.age()
        let key = ResponseCache.Key(
            generation: served.result.generation, level: grant.level, decimals: grant.coordinateDecimals, format: format,
            ageSeconds: age.components.seconds, stale: age >= ttl, state: state)
        if cachedAnswer?.key != key {
            let grant = grant
            let bytes = self.context.responses.body(for: key) {
                AttributeRenderer.render(AttributeView(served: served, grant: grant, ttl: ttl, state: state), as: format)
            }
            let etag = Self.entityTag(generation: served.result.generation, grant: grant)
            var headers = HTTPHeaders()
            headers.add(name: "content-type", value: format.contentType)
            headers.add(name: "content-length", value: String(bytes.count))
            headers.add(name: "etag", value: etag)
            // The head is kept whole: a response head is a heap object, and a keep-alive poller
            // would otherwise have one built for every request.
            cachedAnswer = (
                key, etag, HTTPResponseHead(version: .http1_1, status: .ok, headers: headers),
                channelContext.channel.allocator.buffer(bytes: bytes))
        }
        guard let answer = cachedAnswer else { return }
        if let match = requestHead.headers.first(name: "if-none-match"), match == answer.etag || match == "*" {
            return respond(channelContext, status: .notModified, body: [], contentType: nil, etag: answer.etag, endpoint: "attributes")
        }
        var head = answer.head
        if closeAfterResponse { head.headers.add(name: "connection", value: "close") }
        channelContext.write(wrapOutboundOut(.head(head)), promise: nil)
        if requestHead.method != .HEAD {
            channelContext.write(wrapOutboundOut(.body(.byteBuffer(answer.body))), promise: nil)
        }
        finish(channelContext, status: .ok, endpoint: "attributes")
    }

    private func refresh(query: [String: String], _ channelContext: ChannelHandlerContext) {
        guard grant.mayMutate else {
            return error(channelContext, .forbidden, .forbidden, "uid \(peer.uid) may not force a refresh; see access.mutate", "refresh")
        }
        var requestedWait: Duration?
        if let text = query["wait"] {
            guard let seconds = Double(text), seconds >= 0, seconds.isFinite else {
                return error(channelContext, .badRequest, .badRequest, "wait must be a number of seconds", "refresh")
            }
            requestedWait = min(.milliseconds(Int64(min(seconds, 86_400) * 1000)), self.context.limits.maximumRefreshWait)
        }
        let wait = requestedWait
        let scheduler = self.context.scheduler
        let origin = "socket uid \(peer.uid)"
        let eventLoop = channelContext.eventLoop
        let waits = self.context.refreshWaits
        let promise = eventLoop.makePromise(of: RefreshAnswer.self)
        waits.requestStarted()
        refreshPending = true
        promise.completeWithTask {
            await RefreshAnswer.obtain(scheduler: scheduler, origin: origin, wait: wait, timer: eventLoop, waits: waits)
        }
        let grant = grant
        let ttl = self.context.ttl
        let state = self.context.store
        promise.futureResult.assumeIsolated().whenSuccess { answer in
            // Already answered (shutdown) or the connection is gone.
            guard self.refreshPending else { return }
            self.refreshPending = false
            switch answer.outcome {
            case .refused(let retryAfter):
                let seconds = max(1, retryAfter.components.seconds + (retryAfter.components.attoseconds > 0 ? 1 : 0))
                self.error(channelContext, .tooManyRequests, .refreshRefused,
                           "the refresh budget is spent; a token comes back in \(seconds) s", "refresh",
                           extraHeaders: [("retry-after", String(seconds))])
            case .started, .joined:
                guard wait != nil else {
                    return self.respondJSON(channelContext, RefreshDocument(outcome: answer.outcome), status: .accepted, endpoint: "refresh")
                }
                switch answer.result {
                case .some(.success(let result)):
                    let view = AttributeView(served: ServedResult(result: result, obtainedAt: .now), grant: grant, ttl: ttl, state: state.status.powerState)
                    self.respond(channelContext, status: .ok, body: AttributeRenderer.json(view), contentType: "application/json", endpoint: "refresh")
                case .some(.failure(let failure)):
                    self.error(channelContext, .serviceUnavailable, .refreshFailed, "\(failure)", "refresh")
                case .none:
                    self.respondJSON(channelContext, RefreshDocument(outcome: answer.outcome, stillRunning: true), status: .accepted, endpoint: "refresh")
                }
            }
        }
        // After the answer is written: shutdown waits for this before it stops the loops.
        promise.futureResult.assumeIsolated().whenComplete { _ in waits.requestEnded() }
    }

    private func setState(_ channelContext: ChannelHandlerContext) {
        guard grant.mayMutate else {
            return error(channelContext, .forbidden, .forbidden, "uid \(peer.uid) may not change the state; see access.mutate", "state")
        }
        guard let state = PowerState(stateFileContent: String(decoding: body, as: UTF8.self)) else {
            return error(channelContext, .badRequest, .badRequest, "the body must be foreground or background", "state")
        }
        let scheduler = self.context.scheduler
        let origin = "socket uid \(peer.uid)"
        let promise = channelContext.eventLoop.makePromise(of: Void.self)
        promise.completeWithTask { await scheduler.applyPowerState(state, origin: origin) }
        promise.futureResult.assumeIsolated().whenSuccess {
            self.respondJSON(channelContext, ["state": state.rawValue], status: .ok, endpoint: "state")
        }
    }

    private func metrics(_ channelContext: ChannelHandlerContext) {
        guard let registry = self.context.registry else {
            return error(channelContext, .notFound, .notFound, "metrics are not enabled", "metrics")
        }
        if let served = self.context.store.served {
            MetricsPublisher.recordCacheAge(served.age())
        }
        MetricsPublisher.recordUpdateSubscribers(self.context.store.updateSubscriberCount)
        respond(channelContext, status: .ok, body: registry.emitToBuffer(),
                contentType: "text/plain; version=0.0.4; charset=utf-8", endpoint: "metrics")
    }

    private func startWatch(_ channelContext: ChannelHandlerContext) {
        // Pipelined behind a request that closed the connection: nobody is left to watch.
        guard channelContext.channel.isActive else { return }
        var headers = HTTPHeaders()
        headers.add(name: "content-type", value: "text/event-stream")
        headers.add(name: "cache-control", value: "no-cache")
        channelContext.writeAndFlush(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers))), promise: nil)
        self.context.metrics.request(endpoint: "watch", status: 200)
        // NIO's pipelining assistant stops reading while a response is in flight, and this one
        // never ends: without it the connection goes on reading, so the client's EOF ends the
        // stream at once and a request sent after the watch closes the connection (instead of
        // the client blocking on a full socket buffer, or the stream outliving the client's
        // half-close until the next heartbeat fails).
        let pipeline = channelContext.pipeline.syncOperations
        if let assistant = try? pipeline.handler(type: HTTPServerPipelineHandler.self) {
            pipeline.removeHandler(assistant, promise: nil)
        }
        watch = WatchStream(
            channel: channelContext.channel, store: self.context.store, grant: grant,
            ttl: self.context.ttl, heartbeat: self.context.limits.heartbeatInterval)
        if self.context.connections.isShuttingDown { watch?.finish() }
    }

    // MARK: Writing

    private func error(
        _ channelContext: ChannelHandlerContext, _ status: HTTPResponseStatus, _ code: APIErrorCode, _ message: String,
        _ endpoint: String, extraHeaders: [(String, String)] = []
    ) {
        respond(channelContext, status: status, body: AttributeRenderer.encode(APIErrorBody(error: code, message: message)),
                contentType: "application/json", endpoint: endpoint, extraHeaders: extraHeaders)
    }

    private func respondJSON(_ channelContext: ChannelHandlerContext, _ value: some Encodable, status: HTTPResponseStatus = .ok, endpoint: String) {
        respond(channelContext, status: status, body: AttributeRenderer.encode(value), contentType: "application/json", endpoint: endpoint)
    }

    private func respond(
        _ channelContext: ChannelHandlerContext, status: HTTPResponseStatus, body: [UInt8], contentType: String?,
        etag: String? = nil, endpoint: String, extraHeaders: [(String, String)] = [], contentLength: Int? = nil
    ) {
        var headers = HTTPHeaders()
        if let contentType { headers.add(name: "content-type", value: contentType) }
        headers.add(name: "content-length", value: String(contentLength ?? body.count))
        if let etag { headers.add(name: "etag", value: etag) }
        for (name, value) in extraHeaders { headers.add(name: name, value: value) }
        if closeAfterResponse { headers.add(name: "connection", value: "close") }
        channelContext.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))), promise: nil)
        if !body.isEmpty {
            var buffer = channelContext.channel.allocator.buffer(capacity: body.count)
            buffer.writeBytes(body)
            channelContext.write(wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
        }
        finish(channelContext, status: status, endpoint: endpoint)
    }

    /// Counts the answer, ends it, and either closes or waits for the next request.
    private func finish(_ channelContext: ChannelHandlerContext, status: HTTPResponseStatus, endpoint: String) {
        let code = Int(status.code)
        if let last = lastCounter, last.endpoint == endpoint, last.status == code {
            last.counter.increment()
        } else {
            let counter = self.context.metrics.counter(endpoint: endpoint, status: code)
            counter.increment()
            lastCounter = (endpoint, code, counter)
        }
        busy = false
        if closeAfterResponse {
            let channel = channelContext.channel
            channelContext.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in channel.close(promise: nil) }
        } else {
            // The common keep-alive path: no completion callback to allocate per request.
            channelContext.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            // Idle, unless its answers are backing up: a client that does not take them is
            // holding the daemon's buffers, and gets the head timeout.
            if channelContext.channel.isWritable {
                armIdleTimer(channelContext)
            } else {
                armHeadTimer(channelContext)
            }
        }
    }

    // MARK: Helpers

    static func split(_ uri: String) -> (String, [String: String]) {
        // The common case, a poller's plain GET, without building a query dictionary.
        guard uri.utf8.contains(UInt8(ascii: "?")), let mark = uri.firstIndex(of: "?") else { return (uri, [:]) }
        var query: [String: String] = [:]
        for pair in uri[uri.index(after: mark)...].split(separator: "&") {
            // Empty pieces kept, so there is always a name, if empty ("?=" once crashed here).
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            query[String(parts[0])] = parts.count > 1 ? String(parts[1]) : ""
        }
        return (String(uri[..<mark]), query)
    }

    /// The whole grant is in the tag: a client whose precision changed never gets a 304 for
    /// what it saw before.
    static func entityTag(generation: UInt64, grant: Grant) -> String {
        guard let decimals = grant.coordinateDecimals, Grant.levelsWithDecimals.contains(grant.level) else {
            return "\"\(generation)-\(grant.level.rawValue)\""
        }
        return "\"\(generation)-\(grant.level.rawValue)-d\(decimals)\""
    }

    static func endpointName(_ path: String) -> String {
        switch path {
        case "/v1/attributes": "attributes"
        case "/v1/status": "status"
        case "/v1/refresh": "refresh"
        case "/v1/state": "state"
        case "/v1/watch": "watch"
        case "/metrics": "metrics"
        default: "unknown"
        }
    }
}

