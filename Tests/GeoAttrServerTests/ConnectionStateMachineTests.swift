@testable import GeoAttrServer
import NIOCore
import NIOHTTP1
import Testing

/// The connection's state machine alone: what each event calls for, without a channel.
@Suite("Connection state machine")
struct ConnectionStateMachineTests {
    static let keepAlive = HTTPRequestHead(version: .http1_1, method: .GET, uri: "/v1/status")
    static let closing: HTTPRequestHead = {
        var head = keepAlive
        head.headers.add(name: "connection", value: "close")
        return head
    }()

    /// A machine whose connection has just started.
    static func started(maximumBodyBytes: Int = 16) -> ConnectionStateMachine {
        var machine = ConnectionStateMachine(maximumBodyBytes: maximumBodyBytes)
        #expect(machine.connectionStarted() == .armHeadDeadline)
        return machine
    }

    /// A machine that answered one keep-alive request, its answer flushed.
    static func idleAfterAnAnswer() -> ConnectionStateMachine {
        var machine = started()
        _ = request(keepAlive, into: &machine)
        _ = answer(into: &machine)
        #expect(machine.flushed(writable: true) == .armIdleDeadline)
        return machine
    }

    /// Reads a whole request, and returns what its end called for.
    static func request(_ head: HTTPRequestHead, body: String = "", into machine: inout ConnectionStateMachine) -> ConnectionStateMachine.Action {
        _ = machine.headReceived(head)
        if !body.isEmpty { machine.bodyReceived(ByteBuffer(string: body)) }
        return machine.endReceived()
    }

    /// Writes a whole answer, as the router does, and returns what its end called for.
    static func answer(endsConnection: Bool = false, into machine: inout ConnectionStateMachine) -> (
        head: ConnectionStateMachine.WriteAction, end: ConnectionStateMachine.WriteAction
    ) {
        let head = machine.responseHeadWritten(endsConnection: endsConnection)
        return (head, machine.responseEndWritten())
    }

    // MARK: Requests

    @Test func aWholeRequestIsForwardedWithItsBodyAndClearsTheDeadline() {
        var machine = Self.started()
        #expect(machine.headReceived(Self.keepAlive) == .none)
        machine.bodyReceived(ByteBuffer(string: "ab"))
        machine.bodyReceived(ByteBuffer(string: "c"))
        let expected = ConnectionStateMachine.Request(head: Self.keepAlive, body: Array("abc".utf8), bodyTooLarge: false)
        #expect(machine.endReceived() == .forwardRequest(expected))
        #expect(machine.state == .answering)
        #expect(machine.deadline == nil)
    }

    @Test func aBodyOverTheLimitIsMarkedAndDropped() {
        var machine = Self.started(maximumBodyBytes: 4)
        _ = machine.headReceived(Self.keepAlive)
        machine.bodyReceived(ByteBuffer(string: "abc"))
        machine.bodyReceived(ByteBuffer(string: "de"))
        let expected = ConnectionStateMachine.Request(head: Self.keepAlive, body: Array("abc".utf8), bodyTooLarge: true)
        #expect(machine.endReceived() == .forwardRequest(expected))
    }

    @Test func aHeadAfterAnIdleTimeArmsTheHeadDeadlineForItsBody() {
        var machine = Self.idleAfterAnAnswer()
        #expect(machine.headReceived(Self.keepAlive) == .armHeadDeadline)
        #expect(machine.deadline == .head)
    }

    @Test func bytesThatDecodeToNothingStartTheHeadDeadline() {
        var machine = Self.idleAfterAnAnswer()
        // The read that carried the request leaves the deadline its answer set.
        #expect(machine.readCompleted() == .none)
        #expect(machine.readCompleted() == .armHeadDeadline)
        // Already running: not moved by more such reads.
        #expect(machine.readCompleted() == .none)
    }

    // MARK: Keep-alive

    @Test func aKeepAliveAnswerLeavesTheConnectionOpenAndMovesTheDeadlineOnFlush() {
        var machine = Self.started()
        _ = Self.request(Self.keepAlive, into: &machine)
        #expect(Self.answer(into: &machine) == (.write, .write))
        #expect(machine.state == .idle)
        // Not before the answer is flushed: the client cannot start the next request until then.
        #expect(machine.deadline == nil)
        #expect(machine.flushed(writable: true) == .armIdleDeadline)
        #expect(machine.flushed(writable: true) == .none)
    }

    @Test func anAnswerBackingUpGetsTheHeadDeadlineUntilItIsTaken() {
        var machine = Self.started()
        _ = Self.request(Self.keepAlive, into: &machine)
        _ = Self.answer(into: &machine)
        #expect(machine.flushed(writable: false) == .armHeadDeadline)
        #expect(machine.writabilityChanged(writable: true) == .armIdleDeadline)
        #expect(machine.writabilityChanged(writable: false) == .armHeadDeadline)
    }

    @Test func writabilityDoesNotMoveTheDeadlineWhileAnAnswerIsOwed() {
        var machine = Self.started()
        _ = Self.request(Self.keepAlive, into: &machine)
        #expect(machine.writabilityChanged(writable: false) == .none)
        #expect(machine.writabilityChanged(writable: true) == .none)
    }

    @Test func aRequestThatAsksToCloseClosesAfterItsAnswer() {
        var machine = Self.started()
        _ = Self.request(Self.closing, into: &machine)
        #expect(machine.closesAfterAnswer)
        #expect(Self.answer(into: &machine) == (.writeClosingHead, .writeThenClose))
    }

    @Test func anAnswerThatEndsTheConnectionItselfClosesAfterIt() {
        var machine = Self.started()
        _ = Self.request(Self.keepAlive, into: &machine)
        // Its head says `connection` already: nothing is added.
        #expect(Self.answer(endsConnection: true, into: &machine) == (.write, .writeThenClose))
    }

    // MARK: Watching

    @Test func aSecondHeadAfterAWatchCloses() {
        var machine = Self.started()
        _ = Self.request(Self.keepAlive, into: &machine)
        machine.watchStarted()
        #expect(machine.responseHeadWritten(endsConnection: false) == .write)
        #expect(machine.headReceived(Self.keepAlive) == .close)
    }

    @Test func aWatchIgnoresBodiesAndEndsAndWritesItsOwnEnd() {
        var machine = Self.started()
        _ = Self.request(Self.keepAlive, into: &machine)
        machine.watchStarted()
        machine.bodyReceived(ByteBuffer(string: "x"))
        #expect(machine.endReceived() == .none)
        #expect(machine.writabilityChanged(writable: false) == .none)
        _ = machine.quiesce()
        // Even once the connection is to close: the stream's end closes it by itself.
        #expect(Self.answer(into: &machine) == (.write, .write))
    }

    // MARK: Quiescing

    @Test func quiescingWhileIdleClosesAtOnce() {
        var machine = Self.idleAfterAnAnswer()
        #expect(machine.quiesce() == .close)
    }

    @Test func quiescingWhileARequestIsReadClosesAtOnce() {
        var machine = Self.started()
        _ = machine.headReceived(Self.keepAlive)
        #expect(machine.quiesce() == .close)
    }

    @Test func quiescingWhileAnsweringClosesAfterTheAnswer() {
        var machine = Self.started()
        _ = Self.request(Self.keepAlive, into: &machine)
        #expect(machine.quiesce() == .none)
        #expect(Self.answer(into: &machine) == (.writeClosingHead, .writeThenClose))
    }

    @Test func quiescingEndsAWatch() {
        var machine = Self.started()
        _ = Self.request(Self.keepAlive, into: &machine)
        machine.watchStarted()
        #expect(machine.quiesce() == .finishWatch(reconnect: false))
    }

    // MARK: Grant changes

    @Test func aChangedGrantClosesAnIdleConnectionAtOnce() {
        var machine = Self.started()
        #expect(machine.grantChanged(seesTheSame: false, idleCloses: true) == .close)
    }

    @Test func aChangedGrantNoticedAtARequestsEndClosesAfterItsAnswer() {
        var machine = Self.started()
        _ = Self.request(Self.keepAlive, into: &machine)
        #expect(machine.grantChanged(seesTheSame: false, idleCloses: false) == .none)
        #expect(Self.answer(into: &machine) == (.writeClosingHead, .writeThenClose))
    }

    @Test func aChangedGrantWhileARequestIsReadClosesAfterItsAnswer() {
        var machine = Self.started()
        _ = machine.headReceived(Self.keepAlive)
        #expect(machine.grantChanged(seesTheSame: false, idleCloses: true) == .none)
        _ = machine.endReceived()
        #expect(Self.answer(into: &machine) == (.writeClosingHead, .writeThenClose))
    }

    @Test func aWatchEndsWithAReconnectOnlyWhenWhatItShowsChanged() {
        var machine = Self.started()
        _ = Self.request(Self.keepAlive, into: &machine)
        machine.watchStarted()
        #expect(machine.grantChanged(seesTheSame: true, idleCloses: true) == .none)
        #expect(!machine.closesAfterAnswer)
        #expect(machine.grantChanged(seesTheSame: false, idleCloses: true) == .finishWatch(reconnect: true))
    }

    // MARK: Requests that cannot be parsed

    @Test func aRequestThatCannotBeParsedIsAnsweredOnceWhenNoAnswerIsOwed() {
        var machine = Self.started()
        #expect(machine.protocolErrorCaught() == .answerThenClose)
        #expect(machine.protocolErrorCaught() == .close)
    }

    @Test func aRequestThatCannotBeParsedInsideAnAnswerClosesWithoutOne() {
        var answering = Self.started()
        _ = Self.request(Self.keepAlive, into: &answering)
        #expect(answering.protocolErrorCaught() == .close)

        var watching = Self.started()
        _ = Self.request(Self.keepAlive, into: &watching)
        watching.watchStarted()
        #expect(watching.protocolErrorCaught() == .close)

        var answered = Self.idleAfterAnAnswer()
        #expect(answered.protocolErrorCaught() == .answerThenClose)
    }

    // MARK: Pipelining and back-pressure

    @Test func whatIsReadWhileAnAnswerIsOwedWaitsForItsEndInOrder() {
        var machine = Self.started()
        #expect(machine.hold(.part(.head(Self.keepAlive))) == false)
        _ = machine.headReceived(Self.keepAlive)
        _ = machine.endReceived()
        #expect(machine.state == .answering)
        let second = HTTPRequestHead(version: .http1_1, method: .GET, uri: "/v1/attributes")
        #expect(machine.hold(.part(.head(second))) == true)
        #expect(machine.hold(.part(.end(nil))) == true)
        #expect(machine.hold(.parserError(.invalidMethod)) == true)
        #expect(machine.nextHeld() == nil)
        _ = Self.answer(into: &machine)
        #expect(machine.nextHeld() == .part(.head(second)))
        // What follows a held read waits behind it even once no answer is owed.
        #expect(machine.hold(.part(.head(Self.keepAlive))) == true)
        #expect(machine.nextHeld() == .part(.end(nil)))
        #expect(machine.nextHeld() == .parserError(.invalidMethod))
        #expect(machine.nextHeld() == .part(.head(Self.keepAlive)))
        #expect(machine.nextHeld() == nil)
        #expect(machine.hold(.part(.end(nil))) == false)
    }

    @Test func aHeldRequestStartedBeforeTheFlushKeepsItsOwnDeadline() {
        // Its body still coming: the head deadline it armed stays.
        var reading = Self.started()
        _ = Self.request(Self.keepAlive, into: &reading)
        _ = Self.answer(into: &reading)
        #expect(reading.headReceived(Self.keepAlive) == .armHeadDeadline)
        #expect(reading.flushed(writable: true) == .none)
        #expect(reading.deadline == .head)

        // Whole, and owed an answer (one that waits, or a stream): no deadline.
        var answering = Self.started()
        _ = Self.request(Self.keepAlive, into: &answering)
        _ = Self.answer(into: &answering)
        _ = Self.request(Self.keepAlive, into: &answering)
        #expect(answering.flushed(writable: true) == .none)
        #expect(answering.deadline == nil)
    }

    @Test func noHeldRequestIsHandledAfterAnAnswerThatClosesTheConnection() {
        var machine = Self.started()
        _ = Self.request(Self.closing, into: &machine)
        #expect(machine.hold(.part(.head(Self.keepAlive))) == true)
        #expect(Self.answer(into: &machine).end == .writeThenClose)
        #expect(machine.nextHeld() == nil)
        #expect(machine.held.isEmpty)
    }

    @Test func readingStopsWhileAnAnswerIsOwedAndResumesAfterIt() {
        var machine = Self.started()
        #expect(machine.readRequested(writable: true) == true)
        #expect(machine.resumesReading(writable: true) == false)
        _ = Self.request(Self.keepAlive, into: &machine)
        #expect(machine.readRequested(writable: true) == false)
        #expect(machine.resumesReading(writable: true) == false)
        _ = Self.answer(into: &machine)
        #expect(machine.resumesReading(writable: true) == true)
        // Asked for once, resumed once.
        #expect(machine.resumesReading(writable: true) == false)
    }

    @Test func readingStopsWhileAnswersBackUpAndResumesWhenTheyAreTaken() {
        var machine = Self.idleAfterAnAnswer()
        #expect(machine.readRequested(writable: false) == false)
        #expect(machine.resumesReading(writable: false) == false)
        #expect(machine.resumesReading(writable: true) == true)
    }

    @Test func aWatchReadsOnSoThatWhatFollowsItCloses() {
        var machine = Self.started()
        _ = Self.request(Self.keepAlive, into: &machine)
        #expect(machine.hold(.part(.head(Self.keepAlive))) == true)
        #expect(machine.readRequested(writable: true) == false)
        machine.watchStarted()
        #expect(machine.nextHeld() == .part(.head(Self.keepAlive)))
        #expect(machine.headReceived(Self.keepAlive) == .close)
        #expect(machine.resumesReading(writable: true) == true)
        #expect(machine.readRequested(writable: true) == true)
    }

    // MARK: Closed

    @Test func aClosedConnectionIgnoresWhatIsStillDelivered() {
        var machine = Self.started()
        machine.closed()
        #expect(machine.deadline == nil)
        #expect(machine.headReceived(Self.keepAlive) == .none)
        #expect(machine.endReceived() == .none)
        #expect(machine.quiesce() == .none)
        #expect(machine.protocolErrorCaught() == .close)
        #expect(machine.hold(.part(.end(nil))) == false)
    }
}
