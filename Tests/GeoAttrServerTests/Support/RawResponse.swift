/// One HTTP/1.1 response as the client reads it off the wire.
struct RawResponse: Equatable, CustomStringConvertible {
    var statusLine: String
    /// In the order sent, names as sent.
    var headers: [(name: String, value: String)]
    var body: String

    static func == (lhs: RawResponse, rhs: RawResponse) -> Bool {
        lhs.description == rhs.description
    }

    var status: Int { Int(statusLine.split(separator: " ").dropFirst().first ?? "") ?? 0 }

    func header(_ name: String) -> String? { headers.first { $0.name.lowercased() == name }?.value }

    var description: String {
        statusLine + "\r\n" + headers.map { "\($0.name): \($0.value)\r\n" }.joined() + "\r\n" + body
    }

    /// Splits what a connection sent into responses; a body is what its content-length says,
    /// or (no length: a stream) the rest. (Not for answers to HEAD: their length announces a
    /// body that is not there.)
    static func parse(_ text: String) -> [RawResponse] {
        var responses: [RawResponse] = []
        var rest = Substring(text)
        while let headEnd = rest.firstRange(of: "\r\n\r\n") {
            // "\r\n" is one Character.
            let lines = rest[..<headEnd.lowerBound].split(separator: "\r\n", omittingEmptySubsequences: false).map(String.init)
            let headers = lines.dropFirst().map { line -> (name: String, value: String) in
                let parts = line.split(separator: ":", maxSplits: 1)
                return (String(parts.first ?? ""), parts.count > 1 ? String(parts[1].dropFirst()) : "")
            }
            rest = rest[headEnd.upperBound...]
            // No body after a 304, whatever the headers say.
            let notModified = lines.first?.hasPrefix("HTTP/1.1 304") == true
            let length = notModified ? 0 : headers.first { $0.name.lowercased() == "content-length" }.flatMap { Int($0.value) }
            let bodyBytes = rest.utf8.prefix(min(length ?? rest.utf8.count, rest.utf8.count))
            let body = String(decoding: bodyBytes, as: UTF8.self)
            rest = Substring(rest.utf8.dropFirst(bodyBytes.count))
            responses.append(RawResponse(statusLine: lines.first ?? "", headers: headers, body: body))
        }
        return responses
    }
}
