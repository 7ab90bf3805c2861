import NIOCore
import NIOHTTP1

/// What one client connection is doing, and what each thing that happens to it calls for: the
/// connection's handler feeds it the parts read and written, flushes, writability changes,
/// quiescing and grant changes, and performs the action each returns. It holds no channel, so
/// every transition can be checked without one.
///
/// Requests do not overlap: what is read while an answer is owed is held, in order, until that
/// answer has ended, and reading stops meanwhile (a client that pipelines requests gets its
/// answers one at a time). Reading also stops while the client is not taking its answers
/// (back-pressure). A watch, whose answer never ends, is the last request on its connection.
///
/// (This is the work of NIO's `HTTPServerPipelineHandler` and `BackPressureHandler`, done here,
/// where the connection's state already is, as Hummingbird does: two handlers fewer for every
/// read, write and flush to cross.)
struct ConnectionStateMachine {
    enum State: Equatable {
        /// Between requests: nothing of the next one has been decoded.
        case idle
        /// A request's head arrived; its body is being read, up to the limit.
        case reading(head: HTTPRequestHead, body: [UInt8], bodyTooLarge: Bool)
        /// The request ended; its answer is being written.
        case answering
        /// The answer is an event stream, which ends only with the connection.
        case watching
        /// The channel is gone.
        case closed
    }

    /// A whole request, for the router.
    struct Request: Equatable {
        var head: HTTPRequestHead
        var body: [UInt8]
        var bodyTooLarge: Bool
    }

    enum Action: Equatable {
        case none
        /// An answer is now owed, so no deadline runs until it ends: clear it, then pass the
        /// request on.
        case forwardRequest(Request)
        case armHeadDeadline
        case armIdleDeadline
        case clearDeadline
        case close
        /// End the event stream cleanly; `reconnect`: tell the client to connect again at once.
        case finishWatch(reconnect: Bool)
    }

    enum ErrorAction: Equatable {
        /// Answer the request that could not be parsed, then close.
        case answerThenClose
        /// Close without an answer.
        case close
    }

    /// What was read while an answer was owed, held until it ends.
    enum Held: Equatable {
        case part(HTTPServerRequestPart)
        case parserError(HTTPParserError)
    }

    enum WriteAction: Equatable {
        /// Write the part as it is.
        case write
        /// Write the response head with `connection: close`: the connection ends after it.
        case writeClosingHead
        /// Write the answer's end, then close the connection.
        case writeThenClose
    }

    private(set) var state: State = .idle

    /// A request was read whose answer has not ended (an event stream's never does).
    var answerOwed: Bool {
        switch state {
        case .answering, .watching: true
        case .idle, .reading, .closed: false
        }
    }
    /// Whether the connection ends once the answer in flight has been written (the client
    /// asked, the answer said so, shutdown, or the client's grant changed).
    private(set) var closesAfterAnswer = false
    /// The deadline running: the next request's (`head`), the keep-alive's (`idle`), or none
    /// while an answer is owed.
    private(set) var deadline: ConnectionDeadline.Kind?
    /// Whether anything was decoded since the last read completed: bytes that decoded to nothing
    /// are the start of a request, which must complete within the head timeout.
    private var decodedSinceReadComplete = false
    /// An answer ended and is not flushed yet: the deadline moves once it is, as the client can
    /// only start on the next request once it has the answer.
    private var deadlineMovesOnFlush = false
    /// A request that could not be parsed was answered: no second answer may start.
    private var protocolErrorAnswered = false
    /// Read while an answer was owed, oldest first.
    private(set) var held = CircularBuffer<Held>(initialCapacity: 0)
    /// The channel asked to read while reading was stopped.
    private(set) var readPending = false
    private let maximumBodyBytes: Int

    init(maximumBodyBytes: Int) {
        self.maximumBodyBytes = maximumBodyBytes
    }

    // MARK: Reading

    /// Whether what was just read must wait: an answer is owed, or earlier reads wait already.
    /// (A watch's answer never ends: what follows it is handled at once, and closes.)
    mutating func hold(_ event: Held) -> Bool {
        guard state == .answering || !held.isEmpty else { return false }
        held.append(event)
        return true
    }

    /// The next held read, once no answer is owed any more. None once the connection is to
    /// close after its answer: no request after that one may be answered.
    mutating func nextHeld() -> Held? {
        guard !closesAfterAnswer else {
            held.removeAll()
            return nil
        }
        guard state != .answering else { return nil }
        return held.popFirst()
    }

    /// The channel asks to read more: not while an answer is owed (what came would only be held)
    /// nor while answers back up (`writable` false), so that a client that pipelines requests and
    /// never reads its answers cannot make the daemon queue them without bound.
    mutating func readRequested(writable: Bool) -> Bool {
        guard state != .answering, writable else {
            readPending = true
            return false
        }
        return true
    }

    /// Whether a read asked for while reading was stopped may go now (an answer ended, the held
    /// reads were handled, or the client took its answers).
    mutating func resumesReading(writable: Bool) -> Bool {
        guard readPending, state != .answering, writable else { return false }
        readPending = false
        return true
    }

    /// A new connection must send its first request head in time, like any later one.
    mutating func connectionStarted() -> Action {
        arm(.head)
    }

    mutating func headReceived(_ head: HTTPRequestHead) -> Action {
        decodedSinceReadComplete = true
        switch state {
        case .watching:
            // The stream's response never ends, so a request after it can never be answered.
            return .close
        case .closed:
            return .none
        case .idle, .reading, .answering:
            state = .reading(head: head, body: [], bodyTooLarge: false)
            // The body must arrive within the head's deadline too: a body that trickles, or never
            // comes, would otherwise hold the connection (and a slot of api.max_connections) for ever.
            return deadline == .head ? .none : arm(.head)
        }
    }

    mutating func bodyReceived(_ buffer: ByteBuffer) {
        decodedSinceReadComplete = true
        guard case .reading(let head, var body, var bodyTooLarge) = state else { return }
        // Out of the state while it grows, so that the bytes are not copied.
        state = .idle
        if body.count + buffer.readableBytes > maximumBodyBytes {
            bodyTooLarge = true
        } else {
            body.append(contentsOf: buffer.readableBytesView)
        }
        state = .reading(head: head, body: body, bodyTooLarge: bodyTooLarge)
    }

    mutating func endReceived() -> Action {
        decodedSinceReadComplete = true
        switch state {
        case .watching, .closed:
            return .none
        case .idle, .answering:
            deadline = nil
            return .clearDeadline
        case .reading(let head, let body, let bodyTooLarge):
            deadline = nil
            state = .answering
            if !head.isKeepAlive { closesAfterAnswer = true }
            return .forwardRequest(Request(head: head, body: body, bodyTooLarge: bodyTooLarge))
        }
    }

    /// A read completed. (A read that carried a whole request leaves the deadline its answer
    /// sets.)
    mutating func readCompleted() -> Action {
        defer { decodedSinceReadComplete = false }
        guard !decodedSinceReadComplete, state == .idle, deadline != .head else { return .none }
        // Bytes that decoded to nothing yet: a new request started arriving.
        return arm(.head)
    }

    /// Between requests, answers backing up get the head timeout (a client that does not take
    /// them is holding the daemon's buffers); taken again, back to the idle timeout.
    mutating func writabilityChanged(writable: Bool) -> Action {
        guard state == .idle else { return .none }
        if !writable, deadline != .head { return arm(.head) }
        if writable, deadline == .head { return arm(.idle) }
        return .none
    }

    /// The decoder could not parse what the client sent. It is answered only when no other
    /// answer is owed and none was given to an earlier error: an answer must not start inside
    /// another, and the decoder stops at its first error.
    mutating func protocolErrorCaught() -> ErrorAction {
        guard !protocolErrorAnswered, !answerOwed, state != .closed else { return .close }
        protocolErrorAnswered = true
        return .answerThenClose
    }

    // MARK: Writing

    /// A response head is written. `endsConnection`: it says `connection` itself (an answer to
    /// a request over a limit ends the connection).
    mutating func responseHeadWritten(endsConnection: Bool) -> WriteAction {
        guard state != .watching else { return .write }
        if endsConnection {
            closesAfterAnswer = true
            return .write
        }
        return closesAfterAnswer ? .writeClosingHead : .write
    }

    mutating func responseEndWritten() -> WriteAction {
        switch state {
        case .watching, .closed:
            // The stream's end closes the connection by itself.
            return .write
        case .answering:
            state = .idle
        case .idle, .reading:
            break
        }
        if closesAfterAnswer { return .writeThenClose }
        deadlineMovesOnFlush = true
        return .write
    }

    mutating func flushed(writable: Bool) -> Action {
        guard deadlineMovesOnFlush else { return .none }
        deadlineMovesOnFlush = false
        // A request held behind the answer may have started since (it set its own deadline, or
        // owes an answer and needs none).
        guard state == .idle else { return .none }
        // Idle, unless its answers are backing up.
        return arm(writable ? .idle : .head)
    }

    /// The router started an event stream as the answer.
    mutating func watchStarted() {
        state = .watching
    }

    // MARK: Ending

    /// The server is shutting down (NIO's `ChannelShouldQuiesceEvent`): an idle connection, or
    /// one whose request has not been read whole, closes at once; the answer in flight is given,
    /// with `connection: close`; a stream ends.
    mutating func quiesce() -> Action {
        closesAfterAnswer = true
        switch state {
        case .watching: return .finishWatch(reconnect: false)
        case .answering, .closed: return .none
        case .idle, .reading: return .close
        }
    }

    /// A reload changed what the client is granted, which ends what was granted under the old
    /// policy. `seesTheSame`: the new grant shows the same attributes (only what it may change
    /// differs), which a stream does not depend on. `idleCloses`: an idle connection closes at
    /// once (false when the change was noticed at a request's end, whose answer is owed).
    mutating func grantChanged(seesTheSame: Bool, idleCloses: Bool) -> Action {
        if state == .watching, seesTheSame { return .none }
        closesAfterAnswer = true
        switch state {
        case .watching: return .finishWatch(reconnect: true)
        case .idle where idleCloses: return .close
        default: return .none
        }
    }

    mutating func closed() {
        state = .closed
        deadline = nil
        held.removeAll()
    }

    private mutating func arm(_ kind: ConnectionDeadline.Kind) -> Action {
        deadline = kind
        return kind == .head ? .armHeadDeadline : .armIdleDeadline
    }
}
