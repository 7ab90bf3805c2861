import GeoAttrCore
import GeoAttrModel
import NIOCore
import NIOHTTP1
import Synchronization

/// `GET /v1/watch`: Server-Sent Events. The current attributes at once, then one event per
/// change of what this client may see, and a heartbeat comment every 30 s. Each event's `id:`
/// is the result's generation, and the stream opens with `retry:`, the reconnection delay: a
/// client reconnecting with `Last-Event-ID` equal to the current generation already has the
/// current state and gets only what follows; any other id (older, newer, unparsable) gets the
/// current state at once. Ends cleanly (the chunked body is terminated) at graceful shutdown,
/// and after a `reconnect` event when a reload changes the client's grant; cancelled when its
/// channel closes.
///
/// A client that does not read costs a bounded amount: events are written only while the
/// channel is writable (its buffer below a small high-water mark); meanwhile only the newest
/// event is kept, replacing the one before, and heartbeats are skipped. A client that catches
/// up gets the latest state, never a backlog.
final class WatchStream: Sendable {
    /// What a connection holds in NIO's buffer, beyond what the kernel's socket buffer took,
    /// before it stops taking events: an event or two. Each event is three buffers (chunk
    /// head, data, chunk end), so bytes understate what waits: measured, a 16 KiB mark cost
    /// some 47 KB per stalled client.
    static let writeBufferWaterMark = ChannelOptions.Types.WriteBufferWaterMark(low: 512, high: 2 * 1024)
    /// How long the end of a stream may wait for a client that does not read before the
    /// connection is closed anyway.
    static let endGrace: TimeAmount = .seconds(5)
    /// How long a client waits before it reconnects, in the stream's `retry:` field.
    static let reconnectionDelayMilliseconds = 1_000

    /// The stream's last event when a reload changed what the client is granted. Its empty
    /// `id:` resets the client's last event id: reconnecting, it sends no `Last-Event-ID`, which
    /// would otherwise withhold the current attributes, now at its new grant, until the next fix.
    static let reconnectEvent = "id:\nevent: reconnect\ndata: {\"reason\":\"access_changed\"}\n\n"

    /// The generation a reconnecting client saw last (`Last-Event-ID`), if it is one.
    static func lastEventID(of request: APIRequest) -> UInt64? {
        request.head.headers.first(name: "last-event-id").flatMap { UInt64($0) }
    }

    private let finishing: AsyncStream<Void>.Continuation
    /// On the event loop only.
    private let outbox: NIOLoopBoundBox<LatestEventOutbox<String>>
    private let channel: any Channel

    init(channel: any Channel, store: AttributeReader, grant: Grant, ttl: Duration, heartbeat: Duration, lastEventID: UInt64? = nil) {
        let (finishStream, finishing) = AsyncStream.makeStream(of: Void.self)
        self.finishing = finishing
        let outbox = NIOLoopBoundBox(LatestEventOutbox<String>(), eventLoop: channel.eventLoop)
        self.outbox = outbox
        self.channel = channel
        try? channel.syncOptions?.setOption(ChannelOptions.writeBufferWaterMark, value: Self.writeBufferWaterMark)
        let task = Task {
            // On the event loop, not a sleeping task: a cancelled Task.sleep holds its memory
            // until its deadline (swiftlang/swift#60441), so clients dropping watches in a loop
            // would pile up a heartbeat's worth each; a cancelled scheduled task is freed at once.
            let interval = TimeAmount(heartbeat)
            let heartbeats = channel.eventLoop.scheduleRepeatedTask(initialDelay: interval, delay: interval) { _ in
                // Behind a write the client has not taken, a heartbeat says nothing new.
                guard outbox.value.allowsHeartbeat(writable: channel.isWritable) else { return }
                Self.write(": heartbeat\n\n", to: channel)
            }
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    var lastGeneration = lastEventID
                    for await served in store.updates() {
                        guard let served, served.result.generation != lastGeneration else { continue }
                        lastGeneration = served.result.generation
                        let view = AttributeView(served: served, grant: grant, ttl: ttl, state: store.powerState)
                        var event = "id: \(served.result.generation)\nevent: attributes\ndata: "
                        event += String(decoding: AttributeFormat.json.render(view.answer), as: UTF8.self)
                        event += "\n\n"
                        channel.eventLoop.execute { [event] in
                            if let now = outbox.value.offer(event, writable: channel.isWritable) { Self.write(now, to: channel) }
                        }
                    }
                }
                group.addTask {
                    for await _ in finishStream { return }
                }
                // The first task to end (shutdown, store finished, client gone) ends all.
                await group.next()
                group.cancelAll()
            }
            heartbeats.cancel()
            channel.eventLoop.execute {
                outbox.value.close()
                channel.writeAndFlush(HTTPServerResponsePart.end(nil)).whenComplete { _ in channel.close(promise: nil) }
                // A client that does not read would hold the end, and the connection, for ever.
                let deadline = channel.eventLoop.scheduleTask(in: Self.endGrace) { channel.close(promise: nil) }
                channel.closeFuture.whenComplete { _ in deadline.cancel() }
            }
        }
        // Tied to the channel, not to the handler's view of it: a watch request decoded from the
        // same read as a request that closed the connection reaches the handler after its
        // channelInactive, and a stream started then would live (and render every update) for
        // ever. A channel already closed runs this at once.
        channel.closeFuture.whenComplete { _ in task.cancel() }
    }

    /// Called on the event loop when the channel's writability changes: a waiting event goes
    /// out once the client has taken enough.
    func writabilityChanged() {
        if let event = outbox.value.release(writable: channel.isWritable) { Self.write(event, to: channel) }
    }

    static func write(_ text: String, to channel: any Channel) {
        var buffer = channel.allocator.buffer(capacity: text.utf8.count)
        buffer.writeString(text)
        channel.writeAndFlush(HTTPServerResponsePart.body(.byteBuffer(buffer)), promise: nil)
    }

    /// Ends the stream cleanly. On the event loop (the handler's), nothing rendered before is
    /// written after this returns.
    /// - Parameter reconnect: the client's grant changed: its last event, `reconnect`, tells it
    ///   to connect again at once, to be judged under the new policy (a client that does not know
    ///   the event type ignores it and reconnects after `retry:` as from any end).
    func finish(reconnect: Bool = false) {
        if channel.eventLoop.inEventLoop {
            // Once: a second grant change, or one during shutdown, must not write after the end.
            let first = !outbox.value.isClosed
            outbox.value.close()
            if reconnect, first { Self.write(Self.reconnectEvent, to: channel) }
        }
        finishing.yield()
        finishing.finish()
    }
}
