import GeoAttrModel
import NIOHTTP1

/// One complete request as the endpoints see it: the head, the body (up to the limit), and who
/// sent it with what they are granted at the moment it is answered.
struct APIRequest: Sendable {
    var head: HTTPRequestHead
    /// The request target before `?`, exactly as sent (no decoding).
    var path: String
    var query: [String: String]
    var body: [UInt8]
    /// The body went over `ServerLimits.maximumBodyBytes`; `body` holds what came before.
    var bodyTooLarge: Bool
    var client: APIClient

    var method: HTTPMethod { head.method }

    init(head: HTTPRequestHead, body: [UInt8] = [], bodyTooLarge: Bool = false, client: APIClient) {
        self.head = head
        (path, query) = Self.split(head.uri)
        self.body = body
        self.bodyTooLarge = bodyTooLarge
        self.client = client
    }

    /// The path (undecoded) and the query's names and values, percent-decoded (`%2B` is `+`); a
    /// name without `=` has an empty value.
    static func split(_ uri: String) -> (path: String, query: [String: String]) {
        // The common case, a poller's plain GET, without building a query dictionary.
        guard uri.utf8.contains(UInt8(ascii: "?")), let mark = uri.firstIndex(of: "?") else { return (uri, [:]) }
        var query: [String: String] = [:]
        for pair in uri[uri.index(after: mark)...].split(separator: "&") {
            // Empty pieces kept, so there is always a name, if empty ("?=" must not crash).
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = parts.first else { continue }
            query[percentDecoded(name)] = parts.count > 1 ? percentDecoded(parts[1]) : ""
        }
        return (String(uri[..<mark]), query)
    }

    /// `%XX` escapes decoded; text with a malformed escape, or that does not decode to UTF-8, is
    /// kept as sent (the endpoint then refuses it as it would any other bad value).
    static func percentDecoded(_ text: Substring) -> String {
        guard text.utf8.contains(UInt8(ascii: "%")) else { return String(text) }
        var bytes: [UInt8] = []
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                return String(text)
            }
            bytes.append(high << 4 | low)
        }
        return String(validating: bytes, as: UTF8.self) ?? String(text)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

/// The client on the other end of a connection and what the access policy grants it.
struct APIClient: Sendable, Hashable {
    var peer: PeerIdentity
    var grant: Grant

    /// How scheduler logs name a command from this client.
    var origin: String { "socket uid \(peer.uid)" }
}
