@testable import GeoAttrServer
import NIOCore
import NIOEmbedded
import TestSupport

/// One client connection to the server's pipeline on a thread-safe in-memory channel, for the
/// endpoints that hand work to other threads (the scheduler, the watch stream).
struct AsyncConnection {
    let channel = NIOAsyncTestingChannel()

    init(_ fixture: ServerFixture, as peer: PeerIdentity = ServerFixture.mutator) async throws {
        let channel = channel
        let server = fixture.server
        try await channel.testingEventLoop.executeInContext {
            try ConnectionSetup.configure(channel, peer: peer, context: server)
        }
        try await channel.connect(to: SocketAddress(unixDomainSocketPath: "/run/geoattrd/geoattrd.sock"))
    }

    var isOpen: Bool { channel.isActive }

    func send(_ text: String) async throws {
        try await channel.writeInbound(channel.allocator.buffer(string: text))
    }

    /// Waits until the server has sent text that `complete` accepts, and returns it all.
    func receive(until complete: (String) -> Bool) async throws -> String {
        var text = ""
        while !complete(text) {
            let data = try await channel.waitForOutboundWrite(as: IOData.self)
            if case .byteBuffer(let buffer) = data { text += String(buffer: buffer) }
        }
        return text
    }

    /// What the server sent that was not read yet, without waiting for more.
    func unread() async throws -> String {
        var text = ""
        while let data = try await channel.readOutbound(as: IOData.self) {
            if case .byteBuffer(let buffer) = data { text += String(buffer: buffer) }
        }
        return text
    }

    /// Waits until `count` responses are complete (a stream never is).
    func responses(_ count: Int) async throws -> [RawHTTPResponse] {
        let text = try await receive { RawHTTPResponse.all(in: $0, receivedAll: false).count >= count }
        return RawHTTPResponse.all(in: text, receivedAll: false)
    }

    func waitUntilClosed() async throws {
        try await channel.closeFuture.get()
    }

    func close() async {
        _ = try? await channel.finish(acceptAlreadyClosed: true)
    }
}
