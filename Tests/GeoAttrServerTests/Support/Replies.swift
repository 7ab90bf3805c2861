@testable import GeoAttrServer
import NIOCore
import NIOPosix

extension EndpointReply {
    /// The response, when the endpoint answered at once.
    var response: APIResponse? {
        if case .response(let response) = self { response } else { nil }
    }

    var deferred: DeferredResponse? {
        if case .deferred(let deferred) = self { deferred } else { nil }
    }

    var isWatch: Bool {
        if case .watch = self { true } else { false }
    }

    /// The answer, immediate or deferred (run on a real event loop, whose timers run).
    func resolved() async -> APIResponse? {
        switch self {
        case .response(let response): response
        case .deferred(let deferred): await deferred.work(MultiThreadedEventLoopGroup.singleton.next())
        case .watch: nil
        }
    }
}

extension APIResponse {
    var text: String { String(decoding: body, as: UTF8.self) }

    /// The headers as sent, in order.
    var headerList: [String] { headers.map { "\($0.name): \($0.value)" } }
}
