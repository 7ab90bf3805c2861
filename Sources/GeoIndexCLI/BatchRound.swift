import Dispatch
import GeoIndex
import Synchronization

/// One round of `lookup --batch`: its lines parsed once, looked up in a spatial order (in blocks,
/// in parallel with more than one job) and answered in input order.
struct BatchRound {
    /// Blocks per job and round: the jobs take them as they finish, so one slow or preempted
    /// job holds up a round by a block, not by a job's whole share.
    static let blocksPerJob = 4

    let bytes: [UInt8]
    let lines: [Range<Int>]
    let jobs: Int
    let firstLineNumber: Int
    let reader: GeoIndexReader

    /// What one block of a round wrote: its answers back to back, in the block's (spatial) order.
    struct BlockAnswers: Sendable {
        var bytes: [UInt8] = []
        /// Where each answer ends in `bytes`.
        var ends: [Int] = []
    }

    func answer(to sink: inout BatchOutput) throws(BatchLookup.Failure) {
        let blocks = max(1, min(jobs * Self.blocksPerJob, lines.count))
        let parsed = Self.parse(bytes, lines: lines, blocks: jobs == 1 ? 1 : blocks)
        // Looking points up in a spatial order keeps the index pages each needs in cache for the
        // next; answers are written in input order all the same.
        let order = Self.order(of: parsed)
        let answers = answerBlocks(parsed: parsed, order: order, blocks: blocks)
        // Answers read from a file that changed under its mapping may be zeros: none of the round
        // is written (the output is flushed as it fills, so the check comes before any of it).
        guard reader.isIntact else { throw .index(.changedUnderMapping(path: reader.path)) }
        try write(answers, order: order, to: &sink)
    }

    /// The lines' lookup order (`SpatialOrder`); lines that are not coordinates come last.
    static func order(of parsed: [ParsedLine]) -> [UInt32] {
        SpatialOrder.indices(count: parsed.count) { (parsed[$0].latitude, parsed[$0].longitude) }
    }

    /// Each line parsed, in `blocks` runs of lines at once.
    static func parse(_ bytes: [UInt8], lines: [Range<Int>], blocks: Int) -> [ParsedLine] {
        let runs = Mutex([[ParsedLine]](repeating: [], count: blocks))
        let parseRun: @Sendable (Int) -> Void = { block in
            let first = block * lines.count / blocks
            let end = (block + 1) * lines.count / blocks
            var parsed: [ParsedLine] = []
            parsed.reserveCapacity(end - first)
            bytes.withUnsafeBufferPointer { bytes in
                lines.withUnsafeBufferPointer { lines in
                    for line in first..<end { parsed.append(ParsedLine(bytes, line: lines[line])) }
                }
            }
            runs.withLock { $0[block] = parsed }
        }
        if blocks == 1 { parseRun(0) } else { concurrently(blocks, parseRun) }
        return runs.withLock { $0 }.flatMap { $0 }
    }

    private func answerBlocks(parsed: [ParsedLine], order: [UInt32], blocks: Int) -> [BlockAnswers] {
        let outputs = Mutex([BlockAnswers](repeating: BlockAnswers(), count: blocks))
        let (bytes, reader, firstLineNumber) = (bytes, reader, firstLineNumber)
        // Through buffer pointers: slicing the arrays every job shares would make the jobs
        // contend for their reference counts on each line.
        let answerBlock: @Sendable (Int) -> Void = { block in
            let positions = (block * order.count / blocks)..<((block + 1) * order.count / blocks)
            var answers = BlockAnswers()
            answers.ends.reserveCapacity(positions.count)
            bytes.withUnsafeBufferPointer { bytes in
                parsed.withUnsafeBufferPointer { parsed in
                    order.withUnsafeBufferPointer { order in
                        for position in positions {
                            let line = Int(order[position])
                            BatchLookup.answer(
                                parsed[line], in: bytes, lineNumber: firstLineNumber + line, reader: reader, into: &answers.bytes)
                            answers.ends.append(answers.bytes.count)
                        }
                    }
                }
            }
            outputs.withLock { $0[block] = answers }
        }
        if jobs == 1 {
            for block in 0..<blocks { answerBlock(block) }
        } else {
            Self.concurrently(blocks, answerBlock)
        }
        return outputs.withLock { $0 }
    }

    /// The blocks' answers, in input order.
    private func write(_ answers: [BlockAnswers], order: [UInt32], to sink: inout BatchOutput) throws(BatchLookup.Failure) {
        let blocks = answers.count
        // Where each line's answer is: block in the high half, its place in the block in the low.
        var slots = [UInt64](repeating: 0, count: order.count)
        for block in 0..<blocks {
            let first = block * order.count / blocks
            for position in first..<((block + 1) * order.count / blocks) {
                slots[Int(order[position])] = UInt64(block) << 32 | UInt64(position - first)
            }
        }
        for slot in slots {
            let block = answers[Int(slot >> 32)]
            let index = Int(slot & 0xFFFF_FFFF)
            try sink.append(contentsOf: block.bytes[(index == 0 ? 0 : block.ends[index - 1])..<block.ends[index]])
        }
    }

    /// `concurrentPerform` with a closure the compiler checks for sendability (Linux's takes
    /// a plain one).
    static func concurrently(_ iterations: Int, _ body: @Sendable (Int) -> Void) {
        DispatchQueue.concurrentPerform(iterations: iterations, execute: body)
    }
}
