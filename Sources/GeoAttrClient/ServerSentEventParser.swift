/// One Server-Sent Event.
public struct ServerSentEvent: Sendable, Hashable {
    public var id: String?
    public var event: String?
    public var data: String?
}

/// Splits a `text/event-stream` body into events (blank-line separated; comments ignored).
struct ServerSentEventParser {
    private var pending: [UInt8] = []
    private var current = ServerSentEvent()
    private var hasFields = false

    mutating func feed(_ bytes: [UInt8]) -> [ServerSentEvent] {
        pending += bytes
        var events: [ServerSentEvent] = []
        while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
            var line = Array(pending[..<newline])
            pending.removeSubrange(...newline)
            if line.last == UInt8(ascii: "\r") { line.removeLast() }
            if line.isEmpty {
                if hasFields { events.append(current) }
                current = ServerSentEvent()
                hasFields = false
                continue
            }
            if line.first == UInt8(ascii: ":") { continue }
            let text = String(decoding: line, as: UTF8.self)
            let parts = text.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            let field = String(parts[0])
            var value = parts.count > 1 ? String(parts[1]) : ""
            if value.hasPrefix(" ") { value.removeFirst() }
            hasFields = true
            switch field {
            case "id": current.id = value
            case "event": current.event = value
            case "data": current.data = current.data.map { $0 + "\n" + value } ?? value
            default: break
            }
        }
        return events
    }
}
