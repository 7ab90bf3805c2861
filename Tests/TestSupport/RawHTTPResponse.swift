import Foundation

/// One HTTP/1.1 response as a client reads it off the wire, for tests that speak raw bytes to
/// the server (pipelined, malformed, or as another uid) where an HTTP client would hide them.
public struct RawHTTPResponse: Sendable, CustomStringConvertible {
    public struct Header: Sendable, Equatable {
        public var name: String
        public var value: String
    }

    /// `HTTP/1.1 200 OK`.
    public var statusLine: String
    /// In the order sent, names as sent, values without the whitespace around them.
    public var headers: [Header]
    public var body: String
    /// The response's bytes, head and body, exactly as received.
    public var description: String

    /// The status line's code, 0 when it has none.
    public var status: Int {
        statusLine.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
    }

    /// The value of the first header so named, in any case.
    public func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }
}

extension RawHTTPResponse {
    /// The response at the start of `bytes` and how many bytes it spans; `nil` while it is
    /// incomplete. A body is as long as its content-length says; one without (a stream) runs to
    /// the end of `bytes`. `receivedAll` says nothing more will come (the connection closed, or
    /// the test has all it sent): then a stream ends where `bytes` do, and a body shorter than
    /// its content-length is taken as it is, for the test to see it short. Not for answers to
    /// HEAD: their length announces a body that is not there.
    public static func first(in bytes: ArraySlice<UInt8>, receivedAll: Bool) -> (response: RawHTTPResponse, byteCount: Int)? {
        guard let headEnd = bytes.firstRange(of: Array("\r\n\r\n".utf8)) else { return nil }
        // "\r\n" is one Character.
        let lines = String(decoding: bytes[..<headEnd.lowerBound], as: UTF8.self).split(separator: "\r\n", omittingEmptySubsequences: false)
        var response = RawHTTPResponse(
            statusLine: lines.first.map(String.init) ?? "", headers: lines.dropFirst().map(Self.header(in:)), body: "", description: "")
        let available = bytes.endIndex - headEnd.upperBound
        let bodyLength: Int
        if response.hasNoBody {
            bodyLength = 0
        } else if let declared = response.header("content-length").flatMap({ Int($0) }), declared >= 0 {
            guard declared <= available || receivedAll else { return nil }
            bodyLength = min(declared, available)
        } else {
            guard receivedAll else { return nil }
            bodyLength = available
        }
        let end = headEnd.upperBound + bodyLength
        response.body = String(decoding: bytes[headEnd.upperBound..<end], as: UTF8.self)
        response.description = String(decoding: bytes[..<end], as: UTF8.self)
        return (response, end - bytes.startIndex)
    }

    /// Every response in what a connection sent, in order: the complete ones, or with
    /// `receivedAll`, all of them (see `first(in:receivedAll:)`).
    public static func all(in text: String, receivedAll: Bool) -> [RawHTTPResponse] {
        let bytes = Array(text.utf8)
        var responses: [RawHTTPResponse] = []
        var offset = 0
        while let next = first(in: bytes[offset...], receivedAll: receivedAll) {
            responses.append(next.response)
            offset += next.byteCount
        }
        return responses
    }

    /// A line with no colon is a header named by the whole line, so that it shows in `headers`.
    private static func header(in line: Substring) -> Header {
        guard let colon = line.firstIndex(of: ":") else { return Header(name: String(line), value: "") }
        return Header(name: String(line[..<colon]), value: line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
    }

    /// 1xx, 204 and 304 answers have no body, whatever their headers say.
    private var hasNoBody: Bool {
        (100..<200).contains(status) || status == 204 || status == 304
    }
}
