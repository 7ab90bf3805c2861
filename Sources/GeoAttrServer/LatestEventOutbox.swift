/// The write side of one event stream to a client that may not read: an event goes out while
/// the connection takes writes; otherwise it waits, and a newer event replaces it. At most one
/// event waits, whatever the client does, so a stalled client costs one event, not a backlog.
struct LatestEventOutbox<Event> {
    private(set) var waiting: Event?
    /// Ended: nothing more goes out (a stream ended by a narrower grant sends nothing after).
    private(set) var isClosed = false

    /// The event to write now, or `nil` when it has to wait (replacing any that waited) or the
    /// outbox is closed.
    mutating func offer(_ event: Event, writable: Bool) -> Event? {
        guard !isClosed else { return nil }
        guard writable, waiting == nil else {
            waiting = event
            return nil
        }
        return event
    }

    /// The waiting event, once the connection takes writes again.
    mutating func release(writable: Bool) -> Event? {
        guard writable, let event = waiting else { return nil }
        waiting = nil
        return event
    }

    /// Heartbeats only when nothing is waiting to be taken: behind a stalled write one says
    /// nothing new and would only add to what the client owes.
    func allowsHeartbeat(writable: Bool) -> Bool {
        writable && waiting == nil && !isClosed
    }

    mutating func close() {
        waiting = nil
        isClosed = true
    }
}
