import GeoAttrModel

/// Generations of served results: grows with every change and stays unique across restarts,
/// even without a cache, because it is at least the wall clock in milliseconds.
struct GenerationCounter {
    private(set) var last: UInt64

    init(last: UInt64 = 0) {
        self.last = last
    }

    mutating func next() -> UInt64 {
        // Saturating: a restored generation is checked against the clock, but neither it nor the
        // clock may ever make this trap.
        let next = last.addingReportingOverflow(1)
        last = max(next.overflow ? .max : next.partialValue, UTCTimestamp.now().generationMilliseconds())
        return last
    }
}
