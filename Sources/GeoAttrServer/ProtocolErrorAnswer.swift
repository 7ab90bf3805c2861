import GeoAttrModel
import NIOHTTP1
import GeoAttrSettings

/// The answer to a request the decoder cannot parse: the API's JSON error (431 for a head over
/// the limit, 400 otherwise), after which the connection closes. `nil`: any other error, which
/// closes the connection without an answer.
///
/// In the place of NIO's `HTTPServerProtocolErrorHandler`, and in its shape (an answer only when
/// none is owed, which the connection's state decides): NIO's answers every parser error with an
/// empty 400, and clients read the error code and message in the body.
enum ProtocolErrorAnswer {
    static func response(to error: any Error, limits: ServerLimits) -> APIResponse? {
        switch error {
        case HTTPParserError.headerOverflow:
            let message = "request head larger than \(limits.maximumHeadBytes) bytes"
            return .error(.requestHeaderFieldsTooLarge, .headersTooLarge, message).closingConnection()
        case is HTTPParserError:
            return .error(.badRequest, .badRequest, "malformed HTTP request").closingConnection()
        default:
            return nil
        }
    }
}
