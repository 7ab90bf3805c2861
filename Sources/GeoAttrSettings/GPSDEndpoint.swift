import GeoAttrModel

/// Where gpsd listens: `HOST:PORT`, `[IPv6]:PORT` or `HOST` (port 2947).
public struct GPSDEndpoint: Sendable, Hashable, CustomStringConvertible {
    public static let defaultPort: UInt16 = 2947
    public static let `default` = GPSDEndpoint(host: "127.0.0.1", port: defaultPort)

    public var host: String
    public var port: UInt16

    public init(host: String, port: UInt16) {
        self.host = host
        self.port = port
    }

    /// Parses `HOST:PORT`, `[V6ADDR]:PORT`, `HOST` or `V6ADDR`; `nil` for anything else.
    public init?(parsing text: String) {
        let trimmed = text.trimmingWhitespace()
        guard !trimmed.isEmpty else { return nil }
        if trimmed.hasPrefix("[") {
            guard let close = trimmed.firstIndex(of: "]") else { return nil }
            let host = String(trimmed[trimmed.index(after: trimmed.startIndex)..<close])
            let rest = trimmed[trimmed.index(after: close)...]
            guard !host.isEmpty else { return nil }
            if rest.isEmpty {
                self.init(host: host, port: Self.defaultPort)
                return
            }
            guard rest.hasPrefix(":"), let port = Self.port(rest.dropFirst()) else { return nil }
            self.init(host: host, port: port)
            return
        }
        let colons = trimmed.filter { $0 == ":" }.count
        if colons == 0 {
            self.init(host: trimmed, port: Self.defaultPort)
        } else if colons == 1, let colon = trimmed.firstIndex(of: ":") {
            let host = String(trimmed[..<colon])
            guard !host.isEmpty, let port = Self.port(trimmed[trimmed.index(after: colon)...]) else { return nil }
            self.init(host: host, port: port)
        } else {
            self.init(host: trimmed, port: Self.defaultPort)  // a bare IPv6 address
        }
    }

    public var description: String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    private static func port(_ text: Substring) -> UInt16? {
        guard let value = UInt16(text), value > 0 else { return nil }
        return value
    }
}
