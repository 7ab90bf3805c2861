import FoundationEssentials
public import GeoAttrModel
import NIOCore
import NIOHTTP1
import NIOPosix

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Why a request to geoattrd failed.
public enum GeoAttrClientError: Error, Sendable, CustomStringConvertible {
    /// The socket could not be opened (daemon not running, wrong path, no permission).
    case unreachable(socketPath: String, reason: String)
    /// The daemon answered with an error (`{"error": code, "message": text}`).
    case api(status: Int, code: String, message: String)
    /// The answer could not be read.
    case protocolError(String)

    public var description: String {
        switch self {
        case .unreachable(let path, let reason):
            "cannot reach geoattrd at \(path) (\(reason)): is it running, and may this user open the socket?"
        case .api(let status, let code, let message): "geoattrd answered \(status) \(code): \(message)"
        case .protocolError(let reason): "unreadable answer from geoattrd: \(reason)"
        }
    }
}

/// One HTTP answer.
public struct ClientResponse: Sendable {
    public var status: Int
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]

    public func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    public var text: String { String(decoding: body, as: UTF8.self) }
}

/// A client for geoattrd's Unix-socket API, for Swift processes that want their geo
/// attributes. Depends on nothing of the daemon but the shared model.
///
/// ```swift
/// let client = GeoAttrClient()
/// let document = try await client.attributes()
/// for try await update in client.watch() { ... }
/// ```
public struct GeoAttrClient: Sendable {
    public static let defaultSocketPath = ProductPaths.socket

    public let socketPath: String
    /// How long a request (not a watch) may take, connection included.
    public let timeout: Duration

    public init(socketPath: String = Self.defaultSocketPath, timeout: Duration = .seconds(30)) {
        self.socketPath = socketPath
        self.timeout = timeout
    }

    /// The current attributes, cut to this process's precision level.
    public func attributes() async throws(GeoAttrClientError) -> AttributesDocument {
        try decode(try await checked(request("GET", "/v1/attributes")))
    }

    /// The raw answer of `/v1/attributes?format=`, with its ETag; `ifNoneMatch` makes an
    /// unchanged answer a 304 with no body.
    public func attributes(format: AttributeFormat, ifNoneMatch: String? = nil) async throws(GeoAttrClientError) -> ClientResponse {
        var headers: [(String, String)] = []
        if let ifNoneMatch { headers.append(("if-none-match", ifNoneMatch)) }
        let response = try await request("GET", "/v1/attributes?format=\(format.rawValue)", headers: headers)
        return response.status == 304 ? response : try checked(response)
    }

    /// The status as the daemon wrote it (`geoattrctl status` prints it as it came).
    public func status() async throws(GeoAttrClientError) -> ClientResponse {
        try checked(try await request("GET", "/v1/status"))
    }

    /// The status, decoded.
    public func statusDocument() async throws(GeoAttrClientError) -> StatusDocument {
        try decode(try await status())
    }

    /// Forces a fix (within the daemon's refresh budget); with `wait`, returns when it ended.
    public func refresh(wait: Duration? = nil) async throws(GeoAttrClientError) -> ClientResponse {
        let query = wait.map { "?wait=\(Double($0.components.seconds) + Double($0.components.attoseconds) / 1e18)" } ?? ""
        return try checked(try await request("POST", "/v1/refresh" + query))
    }

    public func setState(_ state: PowerState) async throws(GeoAttrClientError) -> ClientResponse {
        try checked(try await request("PUT", "/v1/state", body: Array(state.rawValue.utf8)))
    }

    /// Every change of the attributes, starting with the current ones, until the daemon ends
    /// the stream (shutdown) or the task is cancelled.
    public func watch() -> AsyncThrowingStream<AttributesDocument, any Error> {
        AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    for try await event in watchEvents() {
                        if case .attributes(let document) = event { continuation.yield(document) }
                    }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// What `/v1/watch` sends that a client acts on.
    public enum WatchEvent: Sendable {
        case attributes(AttributesDocument)
        /// The daemon ends the stream because what this client is granted changed: connect again
        /// at once to be judged under the new policy.
        case reconnect
    }

    /// `/v1/watch`, event by event; event types this client does not know are skipped.
    public func watchEvents() -> AsyncThrowingStream<WatchEvent, any Error> {
        AsyncThrowingStream { continuation in
            let task = Task {
                do throws(GeoAttrClientError) {
                    try await stream("/v1/watch") { event in
                        switch event.event ?? "message" {
                        case "attributes":
                            guard let data = event.data else { return }
                            continuation.yield(.attributes(try decode(ClientResponse(status: 200, headers: [], body: Array(data.utf8)))))
                        case "reconnect":
                            continuation.yield(.reconnect)
                        default:
                            return
                        }
                    }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    // MARK: Transport

    /// Sends one request on a fresh connection and reads the whole answer.
    public func request(
        _ method: String, _ path: String, headers: [(String, String)] = [], body: [UInt8] = []
    ) async throws(GeoAttrClientError) -> ClientResponse {
        let timeout = timeout
        let result = await withTaskGroup(of: Result<ClientResponse, GeoAttrClientError>?.self) { group in
            group.addTask {
                do throws(GeoAttrClientError) {
                    return .success(try await exchange(method, path, headers: headers, body: body))
                } catch {
                    return .failure(error)
                }
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return Task.isCancelled ? nil : .failure(.protocolError("no answer within \(timeout)"))
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first ?? .failure(.protocolError("cancelled"))
        }
        return try result.get()
    }

    private func exchange(
        _ method: String, _ path: String, headers: [(String, String)], body: [UInt8]
    ) async throws(GeoAttrClientError) -> ClientResponse {
        do {
            return try await connect { inbound, outbound in
                try await send(method, path, headers: headers, body: body, outbound)
                var status = 0
                var responseHeaders: [(String, String)] = []
                var bytes: [UInt8] = []
                for try await part in inbound {
                    switch part {
                    case .head(let head):
                        status = Int(head.status.code)
                        responseHeaders = head.headers.map { ($0.name, $0.value) }
                    case .body(var buffer):
                        bytes += buffer.readBytes(length: buffer.readableBytes) ?? []
                    case .end:
                        return ClientResponse(status: status, headers: responseHeaders, body: bytes)
                    }
                }
                throw GeoAttrClientError.protocolError("connection closed before the answer ended")
            }
        } catch let error as GeoAttrClientError {
            throw error
        } catch {
            throw classify(error)
        }
    }

    /// How much of a refused stream's answer is read for its message.
    static let maximumRefusalBytes = 16 * 1024

    /// A Server-Sent Events stream, event by event.
    func stream(_ path: String, onEvent: @escaping @Sendable (ServerSentEvent) throws -> Void) async throws(GeoAttrClientError) {
        do {
            try await connect { inbound, outbound in
                try await send("GET", path, headers: [("accept", "text/event-stream")], body: [], outbound)
                var parser = ServerSentEventParser()
                // A refusal's body says why (the 403 names the access rule): read, bounded.
                var refusal: ClientResponse?
                for try await part in inbound {
                    switch part {
                    case .head(let head):
                        if head.status != .ok { refusal = ClientResponse(status: Int(head.status.code), headers: [], body: []) }
                    case .body(var buffer):
                        let bytes = buffer.readBytes(length: buffer.readableBytes) ?? []
                        if refusal != nil {
                            if (refusal?.body.count ?? 0) < Self.maximumRefusalBytes { refusal?.body += bytes }
                            continue
                        }
                        for event in parser.feed(bytes) {
                            try onEvent(event)
                        }
                    case .end:
                        if let refusal { _ = try checked(refusal) }
                        return
                    }
                }
            }
        } catch let error as GeoAttrClientError {
            throw error
        } catch {
            throw classify(error)
        }
    }

    private func connect<Result: Sendable>(
        _ body: @escaping @Sendable (
            NIOAsyncChannelInboundStream<HTTPClientResponsePart>, NIOAsyncChannelOutboundWriter<HTTPClientRequestPart>
        ) async throws -> Result
    ) async throws -> Result {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(unixDomainSocketPath: socketPath) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    return try NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>(wrappingChannelSynchronously: channel)
                }
            }
        return try await channel.executeThenClose { inbound, outbound in
            try await body(inbound, outbound)
        }
    }

    private func send(
        _ method: String, _ path: String, headers: [(String, String)], body: [UInt8],
        _ outbound: NIOAsyncChannelOutboundWriter<HTTPClientRequestPart>
    ) async throws {
        var head = HTTPRequestHead(version: .http1_1, method: HTTPMethod(rawValue: method), uri: path)
        head.headers.add(name: "host", value: "geoattrd")
        head.headers.add(name: "connection", value: "close")
        for (name, value) in headers { head.headers.add(name: name, value: value) }
        if !body.isEmpty { head.headers.add(name: "content-length", value: String(body.count)) }
        // One write for the whole request: the server may answer and close as soon as it has
        // the head, and a separate write for the (empty) end would then fail.
        var parts: [HTTPClientRequestPart] = [.head(head)]
        if !body.isEmpty { parts.append(.body(.byteBuffer(ByteBuffer(bytes: body)))) }
        parts.append(.end(nil))
        try await outbound.write(contentsOf: parts)
    }

    private func classify(_ error: any Error) -> GeoAttrClientError {
        if let io = error as? IOError {
            return .unreachable(socketPath: socketPath, reason: String(cString: strerror(io.errnoCode)))
        }
        if error is ChannelError || error is SocketAddressError {
            return .unreachable(socketPath: socketPath, reason: "\(error)")
        }
        return .protocolError("\(error)")
    }

    private func checked(_ response: ClientResponse) throws(GeoAttrClientError) -> ClientResponse {
        guard (200..<300).contains(response.status) else {
            let body = try? JSONDecoder().decode(APIErrorBody.self, from: Data(response.body))
            throw .api(status: response.status, code: body?.error.rawValue ?? "http_\(response.status)", message: body?.message ?? response.text)
        }
        return response
    }

    private func decode(_ response: ClientResponse) throws(GeoAttrClientError) -> AttributesDocument {
        try decode(AttributesDocument.self, response, "an attributes document")
    }

    private func decode(_ response: ClientResponse) throws(GeoAttrClientError) -> StatusDocument {
        try decode(StatusDocument.self, response, "a status document")
    }

    private func decode<Document: Decodable>(
        _ type: Document.Type, _ response: ClientResponse, _ what: String
    ) throws(GeoAttrClientError) -> Document {
        do {
            return try JSONDecoder().decode(type, from: Data(response.body))
        } catch {
            throw .protocolError("not \(what): \(error)")
        }
    }
}
