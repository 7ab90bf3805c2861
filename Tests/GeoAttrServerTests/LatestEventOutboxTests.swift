@testable import GeoAttrServer
import Testing

/// A watch stream's queue is bounded at one event: a client that does not read skips
/// intermediate states, never accumulates them.
@Suite("Watch stream backpressure")
struct LatestEventOutboxTests {
    @Test func aStalledClientHoldsOnlyTheNewestEvent() {
        var outbox = LatestEventOutbox<Int>()
        #expect(outbox.offer(0, writable: true) == 0)
        for event in 1...2_000 {
            #expect(outbox.offer(event, writable: false) == nil)
        }
        #expect(outbox.waiting == 2_000)
        #expect(!outbox.allowsHeartbeat(writable: true))
        #expect(outbox.release(writable: false) == nil)
        #expect(outbox.release(writable: true) == 2_000)
        #expect(outbox.release(writable: true) == nil)
        #expect(outbox.allowsHeartbeat(writable: true))
    }

    @Test func anEventDoesNotOvertakeTheOneWaiting() {
        var outbox = LatestEventOutbox<Int>()
        #expect(outbox.offer(1, writable: false) == nil)
        // Writable again, but the waiting one has not been released: the newer replaces it.
        #expect(outbox.offer(2, writable: true) == nil)
        #expect(outbox.release(writable: true) == 2)
    }

    @Test func aClosedOutboxSendsNothingMore() {
        var outbox = LatestEventOutbox<Int>()
        #expect(outbox.offer(1, writable: false) == nil)
        outbox.close()
        #expect(outbox.offer(2, writable: true) == nil)
        #expect(outbox.release(writable: true) == nil)
        #expect(!outbox.allowsHeartbeat(writable: true))
    }

    @Test func heartbeatsWaitForTheClientToRead() {
        let outbox = LatestEventOutbox<Int>()
        #expect(!outbox.allowsHeartbeat(writable: false))
        #expect(outbox.allowsHeartbeat(writable: true))
    }
}
