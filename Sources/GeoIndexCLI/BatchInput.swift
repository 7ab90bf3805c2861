#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// `lookup --batch`'s input in rounds: it waits for input, then takes whatever else is ready, up
/// to a round, and hands out the complete lines (all of it at the end of the input, where the
/// last line may lack its newline).
struct BatchInput {
    let descriptor: Int32
    private var pending: [UInt8] = []
    private var chunk = [UInt8](repeating: 0, count: 1 << 16)
    /// Just past the last newline in `pending` (0: none).
    private var complete = 0
    private var atEnd = false

    init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    /// The next round of complete lines, `nil` at the end of the input.
    mutating func nextRound(upTo roundBytes: Int) throws(BatchLookup.Failure) -> [UInt8]? {
        while !atEnd {
            try fill(upTo: roundBytes)
            let end = atEnd ? pending.count : complete
            if end == 0 { continue }
            // The round keeps the bytes read; only the partial line after it is copied.
            var round = Array(pending[end...])
            swap(&round, &pending)
            round.removeSubrange(end...)
            complete = 0
            return round
        }
        return nil
    }

    private mutating func fill(upTo roundBytes: Int) throws(BatchLookup.Failure) {
        repeat {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw .read(errno: errno)
            }
            if count == 0 {
                atEnd = true
                return
            }
            if let newline = chunk[0..<count].lastIndex(of: 0x0A) { complete = pending.count + newline + 1 }
            pending.append(contentsOf: chunk[0..<count])
        } while pending.count < roundBytes && inputReady()
    }

    private func inputReady() -> Bool {
        var request = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        return poll(&request, 1, 0) > 0
    }
}
