import CoreMetrics
package import NIOCore
import NIOHTTP1
import Synchronization
import GeoAttrSettings

/// Sets up one accepted connection: admission, then the pipeline, each handler with one job:
///
/// 1. NIO's HTTP/1 codec with the daemon's head limits, 2. `ConnectionStateHandler` (the
/// client's grant, deadlines, keep-alive, pipelined requests one at a time, back-pressure, whole
/// requests, the answer to what cannot be parsed), which hands each whole request to its
/// `ConnectionRouter` (the endpoint table: the API's, or the metrics socket's).
///
/// (`package`: the HTTP fuzz harness sets up its connections with it too.)
package enum ConnectionSetup {
    package static func configure(_ channel: any Channel, context: ServerContext) -> EventLoopFuture<Void> {
        configure(channel, context: context, table: EndpointTable.endpoints, timeouts: ConnectionTimeouts(context.limits))
    }

    static func configure(
        _ channel: any Channel, context: ServerContext, table: [Endpoint], timeouts: ConnectionTimeouts
    ) -> EventLoopFuture<Void> {
        // The peer's identity first (at once on an accepted socket): admission counts per uid.
        PeerIdentity.read(channel).flatMapThrowing { peer in
            try configure(channel, peer: peer, context: context, table: table, timeouts: timeouts)
        }
    }

    static func configure(
        _ channel: any Channel, peer: PeerIdentity, context: ServerContext, table: [Endpoint] = EndpointTable.endpoints,
        timeouts: ConnectionTimeouts? = nil
    ) throws {
        let sync = channel.pipeline.syncOperations
        if let refusal = admit(channel, peer: peer, context: context) {
            // Over a limit (or shutting down): a clean 503 once the connection is active, then
            // close; the other clients keep going.
            try sync.addHandler(AdmissionRefusalHandler(refusal: refusal))
            context.metrics.request(endpoint: "connect", status: 503)
            return
        }
        context.metrics.connectedClients.record(context.connections.count)
        var limits = NIOHTTPDecoderLimitConfiguration()
        limits.maxHeaderListSize = context.limits.maximumHeadBytes
        limits.maxHeaderFieldSize = context.limits.maximumHeadBytes
        limits.maxHeaderFieldCount = 128
        // No outbound header validation: every response header is written from constants and
        // numbers (nothing a client sent is ever echoed into a header), and the validator is one
        // more handler that each of a response's three parts would cross. No NIO error handler:
        // the connection's state answers in the API's error format instead.
        // No pipelining assistant: the connection's state machine holds pipelined requests, and
        // stops reading while an answer is owed or answers back up.
        try sync.configureHTTPServerPipeline(
            withPipeliningAssistance: false, withErrorHandling: false, withOutboundHeaderValidation: false,
            withEncoderConfiguration: .init(), withDecoderLimitConfiguration: limits)
        try sync.addHandler(
            ConnectionStateHandler(
                server: context, peer: peer, timeouts: timeouts ?? ConnectionTimeouts(context.limits), table: table))
    }

    /// Adds the connection to the registry, or says why it cannot be.
    static func admit(_ channel: any Channel, peer: PeerIdentity, context: ServerContext) -> ConnectionRegistry.Refusal? {
        // Root and the daemon's own uid are not counted per uid: an operator must be able to
        // get in (geoattrctl doctor) when a client holds all its slots, and neither is a client
        // whose mistakes the limit contains. api.max_connections still bounds them.
        let exempt = peer.uid == 0 || peer.uid == context.policy.withLock { $0.daemonUID }
        return context.connections.admit(
            channel, uid: exempt ? nil : peer.uid, limit: context.limits.maximumConnections,
            perUIDLimit: context.limits.maximumConnectionsPerUID)
    }
}
