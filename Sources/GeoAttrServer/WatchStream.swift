import GeoAttrCore
import GeoAttrModel
import NIOCore
import NIOHTTP1
import Synchronization

/// `GET /v1/watch`: Server-Sent Events. The current attributes at once, then one event per
/// change of what this client may see, and a heartbeat comment every 30 s. Ends cleanly (the
/// chunked body is terminated) at graceful shutdown; cancelled when its channel closes.
final class WatchStream: Sendable {
    private let finishing: AsyncStream<Void>.Continuation

    init(channel: any Channel, store: AttributeStore, grant: Grant, ttl: Duration, heartbeat: Duration) {
        let (finishStream, finishing) = AsyncStream.makeStream(of: Void.self)
        self.finishing = finishing
        let task = Task {
            // On the event loop, not a sleeping task: a cancelled Task.sleep holds its memory
            // until its deadline (swiftlang/swift#60441), so clients dropping watches in a loop
            // would pile up a heartbeat's worth each; a cancelled scheduled task is freed at once.
            let interval = TimeAmount(heartbeat)
            let heartbeats = channel.eventLoop.scheduleRepeatedTask(initialDelay: interval, delay: interval) { _ in
                Self.write(": heartbeat\n\n", to: channel)
            }
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    var lastGeneration: UInt64?
                    for await served in store.updates() {
                        guard let served, served.result.generation != lastGeneration else { continue }
                        lastGeneration = served.result.generation
                        let view = AttributeView(served: served, grant: grant, ttl: ttl, state: store.status.powerState)
                        var event = "id: \(served.result.generation)\nevent: attributes\ndata: "
                        event += String(decoding: AttributeRenderer.json(view), as: UTF8.self)
                        event += "\n\n"
                        Self.write(event, to: channel)
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
            channel.writeAndFlush(HTTPServerResponsePart.end(nil)).whenComplete { _ in channel.close(promise: nil) }
        }
        // Tied to the channel, not to the handler's view of it: a watch request decoded from the
        // same read as a request that closed the connection reaches the handler after its
        // channelInactive, and a stream started then would live (and render every update) for
        // ever. A channel already closed runs this at once.
        channel.closeFuture.whenComplete { _ in task.cancel() }
    }

    private static func write(_ text: String, to channel: any Channel) {
        var buffer = channel.allocator.buffer(capacity: text.utf8.count)
        buffer.writeString(text)
        channel.writeAndFlush(HTTPServerResponsePart.body(.byteBuffer(buffer)), promise: nil)
    }

    /// Ends the stream cleanly.
    func finish() {
        finishing.yield()
        finishing.finish()
    }
}
