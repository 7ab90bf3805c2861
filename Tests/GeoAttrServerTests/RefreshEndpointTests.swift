import GeoAttrCore
import GeoAttrModel
@testable import GeoAttrServer
import NIOHTTP1
import Testing

/// `POST /v1/refresh` against a recording scheduler: every outcome and every status.
@Suite("Refresh endpoint")
struct RefreshEndpointTests {
    func refresh(_ uri: String, scheduler: RecordingScheduler) async throws -> APIResponse {
        let fixture = ServerFixture(scheduler: scheduler)
        let reply = fixture.route(fixture.request(.POST, uri, as: ServerFixture.mutator)).reply
        return try #require(await reply.resolved())
    }

    @Test("without wait: 202 and what the scheduler did", arguments: [(Scheduler.RefreshOutcome.accepted, "started"), (.joined, "joined")])
    func accepted(outcome: Scheduler.RefreshOutcome, word: String) async throws {
        let scheduler = RecordingScheduler(outcome: outcome)
        let response = try await refresh("/v1/refresh", scheduler: scheduler)
        #expect(response.status == .accepted)
        #expect(response.text == #"{"refresh":"\#(word)"}"#)
        #expect(scheduler.commands == [.refresh(origin: "socket uid 1002", waits: false)])
    }

    @Test func waitingForASuccessAnswersTheNewAttributes() async throws {
        let scheduler = RecordingScheduler(result: .success(ServerFixture.result))
        let response = try await refresh("/v1/refresh?wait=5", scheduler: scheduler)
        #expect(response.status == .ok)
        #expect(response.headerList == ["content-type: application/json", "content-length: \(response.body.count)"])
        #expect(response.text.contains(#""generation":7"#))
        #expect(scheduler.commands == [.refresh(origin: "socket uid 1002", waits: true)])
    }

    @Test func waitingForAFailureIsUnavailable() async throws {
        let failure = FixError.timeout(timeoutSeconds: 30)
        let response = try await refresh("/v1/refresh?wait=5", scheduler: RecordingScheduler(result: .failure(failure)))
        #expect(response.status == .serviceUnavailable)
        #expect(response.text == AttributeRendererTestSupport.error("refresh_failed", "\(failure)"))
    }

    @Test func aWaitThatEndsFirstIsAcceptedAndStillRunning() async throws {
        let response = try await refresh("/v1/refresh?wait=0.01", scheduler: RecordingScheduler(outcome: .joined))
        #expect(response.status == .accepted)
        #expect(response.text == #"{"refresh":"joined","still_running":true}"#)
    }

    @Test("refused: 429 with retry-after in whole seconds, rounded up", arguments: [(Duration.milliseconds(1500), 2), (.zero, 1), (.seconds(30), 30)])
    func refused(retryAfter: Duration, seconds: Int) async throws {
        let response = try await refresh("/v1/refresh?wait=1", scheduler: RecordingScheduler(outcome: .refused(retryAfter: retryAfter)))
        #expect(response.status == .tooManyRequests)
        #expect(response.headerList.last == "retry-after: \(seconds)")
        #expect(response.text == AttributeRendererTestSupport.error("refresh_budget_spent", "the refresh budget is spent; a token comes back in \(seconds) s"))
    }

    @Test("a wait that is not a number of seconds: 400", arguments: ["x", "-1", "nan", "inf", ""])
    func badWait(wait: String) async throws {
        let scheduler = RecordingScheduler()
        let response = try await refresh("/v1/refresh?wait=\(wait)", scheduler: scheduler)
        #expect(response.status == .badRequest)
        #expect(response.text == #"{"error":"bad_request","message":"wait must be a number of seconds"}"#)
        #expect(scheduler.commands.isEmpty)
    }

    @Test func shutdownHasItsOwnAnswer() throws {
        let fixture = ServerFixture()
        let deferred = try #require(fixture.route(fixture.request(.POST, "/v1/refresh", as: ServerFixture.mutator)).reply.deferred)
        #expect(deferred.answerAtShutdown?.status == .serviceUnavailable)
        #expect(deferred.answerAtShutdown?.text == #"{"error":"shutting_down","message":"geoattrd is shutting down; retry when it is back"}"#)
        #expect(deferred.waits != nil)
    }
}

enum AttributeRendererTestSupport {
    static func error(_ code: String, _ message: String) -> String {
        #"{"error":"\#(code)","message":"\#(message)"}"#
    }
}
