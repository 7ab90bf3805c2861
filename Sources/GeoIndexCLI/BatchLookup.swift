#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import GeoIndex
import Synchronization

/// `lookup --batch`: `lat,lon` lines in, one JSON object per line out, in input order.
///
/// Output is buffered for throughput and flushed whenever no more input is ready, so the
/// command also works interactively and as a co-process. A bad line yields a JSON error
/// object for that line; the run continues.
///
/// The lines that are ready (up to a round) are sorted along a space-filling curve, cut into a
/// few blocks per job, looked up (in parallel with more than one job) and written in input order
/// before more input is read. Nearby points share index pages, so a sorted round runs faster
/// than the same lines in their own order; the output is the same.
public struct BatchLookup: Sendable {
    public enum Failure: Error, CustomStringConvertible {
        case read(errno: Int32)
        case write(errno: Int32)

        public var description: String {
            switch self {
            case .read(let code): return "reading input failed (errno \(code))"
            case .write(let code): return "writing output failed (errno \(code)); is the reader of the output gone?"
            }
        }
    }

    let reader: GeoIndexReader
    let input: Int32
    let output: Int32
    let jobs: Int
    /// Input bytes per job and round (at most `maximumRoundBytes` a round): about 45,000 lines,
    /// enough that sorting finds neighbours and a round's fork, join and write cost little.
    let blockBytes: Int
    /// Answers each line as it is read, in input order, on the calling thread: the tests'
    /// reference for what the rounds must write.
    let lineByLine: Bool
    private static let flushThreshold = 1 << 16

    /// - Parameters:
    ///   - jobs: threads looking up at once; 1 answers on the calling thread alone.
    ///   - blockBytes: input per job and round (tests make it small).
    public init(
        reader: GeoIndexReader, input: Int32 = STDIN_FILENO, output: Int32 = STDOUT_FILENO, jobs: Int = 1,
        blockBytes: Int = 1 << 20
    ) {
        self.init(reader: reader, input: input, output: output, jobs: jobs, blockBytes: blockBytes, lineByLine: false)
    }

    init(reader: GeoIndexReader, input: Int32, output: Int32, jobs: Int, blockBytes: Int, lineByLine: Bool) {
        self.reader = reader
        self.input = input
        self.output = output
        self.jobs = max(1, jobs)
        self.blockBytes = max(1, blockBytes)
        self.lineByLine = lineByLine
    }

    /// Processes input until end of file; returns the number of lines answered.
    @discardableResult
    public func run() throws(Failure) -> Int {
        lineByLine ? try runLineByLine() : try runRounds()
    }

    private func runLineByLine() throws(Failure) -> Int {
        var pending: [UInt8] = []
        var out: [UInt8] = []
        out.reserveCapacity(Self.flushThreshold * 2)
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        var lineNumber = 0
        while true {
            if !out.isEmpty && !inputReady() { try flush(&out) }
            let count = chunk.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw .read(errno: errno)
            }
            if count == 0 { break }
            // What is pending already holds no newline: search only the new bytes, so a long
            // line arriving in many reads is not rescanned on each.
            var searchFrom = pending.count
            pending.append(contentsOf: chunk[0..<count])
            var lineStart = 0
            while let newline = Self.newline(in: pending[...], from: searchFrom) {
                lineNumber += 1
                answer(pending[lineStart..<newline], lineNumber: lineNumber, into: &out)
                lineStart = newline + 1
                searchFrom = lineStart
                if out.count >= Self.flushThreshold { try flush(&out) }
            }
            pending.removeFirst(lineStart)
        }
        if !pending.isEmpty {
            lineNumber += 1
            answer(pending[...], lineNumber: lineNumber, into: &out)
        }
        try flush(&out)
        return lineNumber
    }

    /// A round's input at most, whatever the jobs: its output (about 12 times as many bytes) is
    /// held until the round is written.
    static let maximumRoundBytes = 1 << 21
    /// Blocks per job and round: the jobs take them as they finish, so one slow or preempted
    /// job holds up a round by a block, not by a job's whole share.
    static let blocksPerJob = 4

    /// What one block of a round wrote: its answers back to back, in the block's (spatial) order.
    private struct BlockAnswers: Sendable {
        var bytes: [UInt8] = []
        /// Where each answer ends in `bytes`.
        var ends: [Int] = []
    }

    private func runRounds() throws(Failure) -> Int {
        var pending: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        var lineNumber = 0
        let roundBytes = min(jobs * blockBytes, Self.maximumRoundBytes)
        // Just past the last newline in `pending` (0: none).
        var complete = 0
        var atEnd = false
        var out: [UInt8] = []
        while !atEnd {
            // Wait for input, then take whatever else is ready, up to a round.
            repeat {
                let count = chunk.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
                if count < 0 {
                    if errno == EINTR { continue }
                    throw .read(errno: errno)
                }
                if count == 0 {
                    atEnd = true
                    break
                }
                if let newline = chunk[0..<count].lastIndex(of: 0x0A) { complete = pending.count + newline + 1 }
                pending.append(contentsOf: chunk[0..<count])
            } while pending.count < roundBytes && inputReady()
            // Complete lines only, but all of it at the end (the last line may lack its newline).
            let end = atEnd ? pending.count : complete
            if end == 0 { continue }
            let round = pending[0..<end]
            let lines = Self.lineRanges(in: round)
            // Looking points up in a spatial order keeps the index pages each needs in cache for the
            // next; answers are written in input order all the same.
            let blocks = max(1, min(jobs * Self.blocksPerJob, lines.count))
            let order = Self.spatialOrder(of: round, lines: lines, blocks: jobs == 1 ? 1 : blocks)
            let firstLineNumber = lineNumber + 1
            let outputs = Mutex([BlockAnswers](repeating: BlockAnswers(), count: blocks))
            let answerBlock: @Sendable (Int) -> Void = { block in
                // The block's lines are copied out first: slicing the round shared by every job would
                // make the jobs contend for its reference count on each line.
                let positions = (block * order.count / blocks)..<((block + 1) * order.count / blocks)
                var text: [UInt8] = []
                var ends: [Int] = []
                ends.reserveCapacity(positions.count)
                order.withUnsafeBufferPointer { order in
                    lines.withUnsafeBufferPointer { lines in
                        for position in positions {
                            text.append(contentsOf: round[lines[Int(order[position])]])
                            ends.append(text.count)
                        }
                    }
                }
                var answers = BlockAnswers()
                answers.ends.reserveCapacity(positions.count)
                var start = 0
                for (index, position) in positions.enumerated() {
                    answer(text[start..<ends[index]], lineNumber: firstLineNumber + Int(order[position]), into: &answers.bytes)
                    answers.ends.append(answers.bytes.count)
                    start = ends[index]
                }
                outputs.withLock { $0[block] = answers }
            }
            if jobs == 1 {
                for block in 0..<blocks { answerBlock(block) }
            } else {
                Self.concurrently(blocks, answerBlock)
            }
            let answers = outputs.withLock { $0 }
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
                out.append(contentsOf: block.bytes[(index == 0 ? 0 : block.ends[index - 1])..<block.ends[index]])
                if out.count >= Self.flushThreshold { try flush(&out) }
            }
            try flush(&out)
            lineNumber += lines.count
            pending.removeFirst(end)
            complete -= min(end, complete)
        }
        return lineNumber
    }

    /// `concurrentPerform` with a closure the compiler checks for sendability (Linux's takes
    /// a plain one).
    private static func concurrently(_ iterations: Int, _ body: @Sendable (Int) -> Void) {
        DispatchQueue.concurrentPerform(iterations: iterations, execute: body)
    }

    /// The lines of `bytes` (the last one may lack its newline), without their newlines.
    static func lineRanges(in bytes: ArraySlice<UInt8>) -> [Range<Int>] {
        var lines: [Range<Int>] = []
        var lineStart = bytes.startIndex
        while lineStart < bytes.endIndex {
            let lineEnd = newline(in: bytes, from: lineStart) ?? bytes.endIndex
            lines.append(lineStart..<lineEnd)
            lineStart = lineEnd + 1
        }
        return lines
    }

    /// Line indices sorted along a Z-order curve of their coordinates (about 600 m cells), lines
    /// that are not coordinates last; ties keep input order. Input order itself when at least
    /// half the lines lie within about 10 km of the line before. The keys are computed in
    /// `blocks` runs of lines at once.
    static func spatialOrder(of bytes: ArraySlice<UInt8>, lines: [Range<Int>], blocks: Int) -> [UInt32] {
        let runs = Mutex([[UInt64]](repeating: [], count: blocks))
        let keyRun: @Sendable (Int) -> Void = { block in
            let first = block * lines.count / blocks
            let end = (block + 1) * lines.count / blocks
            var keys = [UInt64](repeating: 0, count: end - first)
            for line in first..<end {
                var cell = UInt64(UInt32.max)
                if let (latitude, longitude, _, _) = parseCoordinates(bytes[lines[line]]), latitude.isFinite, longitude.isFinite {
                    cell = UInt64(zOrder(latitude: latitude, longitude: longitude))
                }
                keys[line - first] = cell << 32 | UInt64(line)
            }
            runs.withLock { $0[block] = keys }
        }
        if blocks == 1 { keyRun(0) } else { concurrently(blocks, keyRun) }
        var keys = runs.withLock { $0 }.flatMap { $0 }
        // Input already in spatial order, a device's track say, is left in its own order, which
        // keeps consecutive points closer than any curve does (sorting made tracks 15% slower).
        var neighbours = 0
        for line in keys.indices.dropFirst() where keys[line] >> Self.neighbourShift == keys[line - 1] >> Self.neighbourShift {
            neighbours += 1
        }
        if neighbours * 2 >= keys.count { return Array(0..<UInt32(keys.count)) }
        keys.sort()
        return keys.map { UInt32(truncatingIfNeeded: $0) }
    }

    /// Keys whose bits above this agree lie in the same Z-order cell of about 10 km.
    private static let neighbourShift: UInt64 = 32 + 8

    /// The Z-order (Morton) code of a point on a 65,536 x 65,536 grid over the globe.
    static func zOrder(latitude: Double, longitude: Double) -> UInt32 {
        func spread(_ value: UInt32) -> UInt32 {
            var value = value & 0xFFFF
            value = (value | (value << 8)) & 0x00FF_00FF
            value = (value | (value << 4)) & 0x0F0F_0F0F
            value = (value | (value << 2)) & 0x3333_3333
            value = (value | (value << 1)) & 0x5555_5555
            return value
        }
        let x = UInt32(min(max((longitude + 180) / 360 * 65_536, 0), 65_535))
        let y = UInt32(min(max((latitude + 90) / 180 * 65_536, 0), 65_535))
        return spread(x) | spread(y) << 1
    }

    /// The index of the first newline in `bytes` at or after `start`, found with memchr.
    private static func newline(in bytes: ArraySlice<UInt8>, from start: Int) -> Int? {
        bytes.withUnsafeBytes { raw -> Int? in
            let offset = start - bytes.startIndex
            guard offset < raw.count, let base = raw.baseAddress, let found = memchr(base + offset, 0x0A, raw.count - offset) else {
                return nil
            }
            return bytes.startIndex + base.distance(to: UnsafeRawPointer(found))
        }
    }

    private func answer(_ line: ArraySlice<UInt8>, lineNumber: Int, into out: inout [UInt8]) {
        var text = line
        if text.last == 0x0D { text = text.dropLast() }
        if let (latitude, longitude, latitudeText, longitudeText) = Self.parseCoordinates(text) {
            if latitude.isFinite, longitude.isFinite, abs(latitude) <= 90, abs(longitude) <= 180 {
                let place = reader.place(latitude: latitude, longitude: longitude)
                if PlaceJSON.isJSONNumber(latitudeText) && PlaceJSON.isJSONNumber(longitudeText) {
                    PlaceJSON.append(place, latitudeText: latitudeText, longitudeText: longitudeText, to: &out)
                } else {
                    PlaceJSON.append(place, latitude: latitude, longitude: longitude, to: &out)
                }
            } else {
                PlaceJSON.appendError("coordinates out of range (latitude -90..90, longitude -180..180)", line: lineNumber, input: text, to: &out)
            }
        } else {
            PlaceJSON.appendError("expected `lat,lon` with decimal degrees", line: lineNumber, input: text, to: &out)
        }
        out.append(0x0A)
    }

    /// Parses `lat,lon` (spaces allowed around either number); also returns the two trimmed
    /// fields, which the output echoes when they are JSON numbers already.
    static func parseCoordinates(
        _ line: ArraySlice<UInt8>
    ) -> (latitude: Double, longitude: Double, latitudeText: ArraySlice<UInt8>, longitudeText: ArraySlice<UInt8>)? {
        guard let (latitudeText, longitudeText) = fields(line), let latitude = parseNumber(latitudeText),
            let longitude = parseNumber(longitudeText)
        else { return nil }
        return (latitude, longitude, latitudeText, longitudeText)
    }

    /// The two trimmed fields around the first comma; nil without one.
    static func fields(_ line: ArraySlice<UInt8>) -> (ArraySlice<UInt8>, ArraySlice<UInt8>)? {
        guard let comma = line.firstIndex(of: UInt8(ascii: ",")) else { return nil }
        return (trim(line[line.startIndex..<comma]), trim(line[(comma + 1)...]))
    }

    private static func trim(_ field: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        var trimmed = field
        while let first = trimmed.first, first == 0x20 || first == 0x09 { trimmed = trimmed.dropFirst() }
        while let last = trimmed.last, last == 0x20 || last == 0x09 { trimmed = trimmed.dropLast() }
        return trimmed
    }

    /// A number as `Double(String)` reads it, without making a String for the common case.
    static func parseNumber(_ trimmed: ArraySlice<UInt8>) -> Double? {
        guard !trimmed.isEmpty, trimmed.count < 64 else { return nil }
        if let exact = exactDecimal(trimmed) { return exact }
        return Double(String(decoding: trimmed, as: UTF8.self))
    }

    /// Exact powers of ten: every one up to 1e22 is a Double without rounding.
    private static let powersOfTen: [Double] = (0...22).map { exponent in
        (0..<exponent).reduce(1.0) { value, _ in value * 10 }
    }

    /// `[-]digits[.digits]` with at most 15 significant digits and at most 22 after the point, the
    /// shape of almost every coordinate: the digits as an integer, divided by a power of ten.
    /// Both are exact Doubles, and IEEE division rounds the quotient correctly, so the result is
    /// the one strtod gives (Clinger's fast path). Anything else returns nil, for strtod.
    static func exactDecimal(_ text: ArraySlice<UInt8>) -> Double? {
        guard let first = text.first else { return nil }
        var index = text.startIndex
        let negative = first == UInt8(ascii: "-")
        if negative { index += 1 }
        var mantissa: UInt64 = 0
        var digits = 0
        var fractionDigits = 0
        var seenPoint = false
        var seenDigit = false
        while index < text.endIndex {
            let byte = text[index]
            if byte >= 0x30 && byte <= 0x39 {
                seenDigit = true
                if mantissa != 0 || byte != 0x30 { digits += 1 }
                guard digits <= 15 else { return nil }
                mantissa = mantissa * 10 + UInt64(byte - 0x30)
                if seenPoint { fractionDigits += 1 }
            } else if byte == UInt8(ascii: "."), !seenPoint {
                seenPoint = true
            } else {
                return nil
            }
            index += 1
        }
        guard seenDigit, fractionDigits < powersOfTen.count else { return nil }
        let magnitude = Double(mantissa) / powersOfTen[fractionDigits]
        return negative ? -magnitude : magnitude
    }

    private func inputReady() -> Bool {
        var descriptor = pollfd(fd: input, events: Int16(POLLIN), revents: 0)
        return poll(&descriptor, 1, 0) > 0
    }

    private func flush(_ out: inout [UInt8]) throws(Failure) {
        var failure: Int32 = 0
        out.withUnsafeBytes { buffer in
            guard let base = buffer.baseAddress else { return }
            var done = 0
            while done < buffer.count {
                let n = write(output, base + done, buffer.count - done)
                if n < 0 {
                    if errno == EINTR { continue }
                    failure = errno
                    return
                }
                done += n
            }
        }
        out.removeAll(keepingCapacity: true)
        if failure != 0 { throw .write(errno: failure) }
    }
}
