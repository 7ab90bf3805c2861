@testable import GeoAttrServer
import NIOCore
import NIOEmbedded
import TestSupport

/// One client connection to the server's pipeline, in memory: the daemon's own connection
/// setup on an `EmbeddedChannel`, fed bytes as a client sends them. The loop's clock moves
/// only when told, so deadlines are exact.
final class EmbeddedConnection {
    let channel = EmbeddedChannel()

    init(_ fixture: ServerFixture, as peer: PeerIdentity = ServerFixture.reader, table: [Endpoint] = EndpointTable.endpoints) throws {
        try ConnectionSetup.configure(channel, peer: peer, context: fixture.server, table: table)
        try channel.connect(to: SocketAddress(unixDomainSocketPath: "/run/geoattrd/geoattrd.sock")).wait()
    }

    var isOpen: Bool { channel.isActive }

    func send(_ text: String) throws {
        try channel.writeInbound(channel.allocator.buffer(string: text))
    }

    /// Everything the server sent since the last call.
    func received() throws -> String {
        var text = ""
        while let data = try channel.readOutbound(as: IOData.self) {
            if case .byteBuffer(let buffer) = data { text += String(buffer: buffer) }
        }
        return text
    }

    /// Sends one request and returns the responses it brought (the channel runs the pipeline
    /// as it is fed, so they are all in).
    func exchange(_ text: String) throws -> [RawHTTPResponse] {
        try send(text)
        return RawHTTPResponse.all(in: try received(), receivedAll: true)
    }

    /// As when the kernel's socket buffer fills up or drains.
    func setWritable(_ writable: Bool) {
        channel.isWritable = writable
        channel.pipeline.fireChannelWritabilityChanged()
    }

    func advanceTime(by duration: TimeAmount) {
        channel.embeddedEventLoop.advanceTime(by: duration)
    }

    deinit {
        _ = try? channel.finish(acceptAlreadyClosed: true)
    }
}
