/// Stable error codes of the socket API (`{"error": code, "message": text}`).
public enum APIErrorCode: String, Sendable, Hashable, Codable {
    case noLocation = "no_location"
    case notFound = "not_found"
    case methodNotAllowed = "method_not_allowed"
    case forbidden
    case badRequest = "bad_request"
    case headersTooLarge = "headers_too_large"
    case bodyTooLarge = "body_too_large"
    case requestTimeout = "request_timeout"
    case refreshRefused = "refresh_budget_spent"
    case refreshFailed = "refresh_failed"
    case tooManyConnections = "too_many_connections"
    case shuttingDown = "shutting_down"
}

/// The body of every error answer.
public struct APIErrorBody: Sendable, Hashable, Codable {
    public var error: APIErrorCode
    public var message: String

    public init(error: APIErrorCode, message: String) {
        self.error = error
        self.message = message
    }
}
