import GeoAttrCore
import NIOCore

/// A connection's one timer: the next request head must arrive by the head deadline, an idle
/// keep-alive connection closes at the idle deadline. Re-armed lazily: moving the deadline is
/// far cheaper than scheduling and cancelling a task per request, so a request only moves it
/// and the timer, when it fires early, schedules itself again for the deadline.
final class ConnectionDeadline {
    enum Kind {
        /// A request (head and body) is due.
        case head
        /// Nothing is due; the connection is idle.
        case idle
    }

    private let eventLoop: any EventLoop
    /// What a passed deadline does, given once: a closure made per request would be an
    /// allocation per request.
    private let expired: (Kind) -> Void
    private var deadline: NIODeadline?
    private(set) var kind: Kind = .head
    private var timer: Scheduled<Void>?

    /// `expired` runs on the event loop when a deadline passes.
    init(eventLoop: any EventLoop, expired: @escaping (Kind) -> Void) {
        self.eventLoop = eventLoop
        self.expired = expired
    }

    /// Sets the deadline `duration` from now.
    func set(in duration: Duration, kind: Kind) {
        // The loop's clock: the wall clock on a real loop, a clock tests move on an embedded one.
        let when = eventLoop.now + .nanoseconds(duration.nanosecondsValue)
        deadline = when
        self.kind = kind
        if timer == nil { schedule(at: when) }
    }

    /// No deadline until the next `set`: a timer that fires meanwhile does nothing.
    func clear() {
        deadline = nil
    }

    /// Stops the timer for good (the connection is gone).
    func cancel() {
        timer?.cancel()
        timer = nil
        deadline = nil
    }

    private func schedule(at when: NIODeadline) {
        let loopBound = NIOLoopBound(self, eventLoop: eventLoop)
        timer = eventLoop.scheduleTask(deadline: when) { loopBound.value.fire() }
    }

    private func fire() {
        timer = nil
        guard let deadline else { return }
        if deadline > eventLoop.now {
            schedule(at: deadline)
            return
        }
        expired(kind)
    }
}
