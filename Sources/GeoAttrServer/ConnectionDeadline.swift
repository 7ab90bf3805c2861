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
    private var deadline: NIODeadline?
    private(set) var kind: Kind = .head
    private var timer: Scheduled<Void>?

    init(eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    /// Sets the deadline `duration` from now. `expired` runs on the event loop when it passes.
    func set(in duration: Duration, kind: Kind, expired: @escaping (Kind) -> Void) {
        // The loop's clock: the wall clock on a real loop, a clock tests move on an embedded one.
        let when = eventLoop.now + .nanoseconds(duration.nanosecondsValue)
        deadline = when
        self.kind = kind
        if timer == nil { schedule(at: when, expired: expired) }
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

    private func schedule(at when: NIODeadline, expired: @escaping (Kind) -> Void) {
        let loopBound = NIOLoopBound((self, expired), eventLoop: eventLoop)
        timer = eventLoop.scheduleTask(deadline: when) {
            let (deadline, expired) = loopBound.value
            deadline.fire(expired: expired)
        }
    }

    private func fire(expired: @escaping (Kind) -> Void) {
        timer = nil
        guard let deadline else { return }
        if deadline > eventLoop.now {
            schedule(at: deadline, expired: expired)
            return
        }
        expired(kind)
    }
}
