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
/// With more than one job, the lines that are ready are cut at line boundaries into a few
/// blocks per job, looked up in parallel and written in input order before more input is read.
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
    /// Input bytes per job and round in parallel runs: enough lines (about 9,000) that a round's
    /// fork, join and write are a few percent of its lookups.
    let blockBytes: Int
    private static let flushThreshold = 1 << 16

    /// - Parameters:
    ///   - jobs: threads looking up at once; 1 answers on the calling thread alone.
    ///   - blockBytes: input per job and round when `jobs` > 1 (tests make it small).
    public init(
        reader: GeoIndexReader, input: Int32 = STDIN_FILENO, output: Int32 = STDOUT_FILENO, jobs: Int = 1,
        blockBytes: Int = 1 << 18
    ) {
        self.reader = reader
        self.input = input
        self.output = output
        self.jobs = max(1, jobs)
        self.blockBytes = max(1, blockBytes)
    }

    /// Processes input until end of file; returns the number of lines answered.
    @discardableResult
    public func run() throws(Failure) -> Int {
        jobs > 1 ? try runParallel() : try runSerial()
    }

    private func runSerial() throws(Failure) -> Int {
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

    private func runParallel() throws(Failure) -> Int {
        var pending: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        var lineNumber = 0
        let roundBytes = min(jobs * blockBytes, Self.maximumRoundBytes)
        // Just past the last newline in `pending` (0: none).
        var complete = 0
        var atEnd = false
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
            let cuts = Self.blockEnds(in: round, blocks: jobs * Self.blocksPerJob)
            var firstLines: [Int] = []
            var start = 0
            for cut in cuts {
                firstLines.append(lineNumber + 1)
                lineNumber += Self.lineCount(in: round[start..<cut])
                start = cut
            }
            let lineNumbers = firstLines
            let outputs = Mutex([[UInt8]](repeating: [], count: cuts.count))
            Self.concurrently(cuts.count) { block in
                var out: [UInt8] = []
                answerLines(round[(block == 0 ? 0 : cuts[block - 1])..<cuts[block]], firstLineNumber: lineNumbers[block], into: &out)
                outputs.withLock { $0[block] = out }
            }
            var answers = outputs.withLock { $0 }
            for block in answers.indices { try flush(&answers[block]) }
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

    /// Answers every line of `text` (the last one may lack its newline).
    private func answerLines(_ text: ArraySlice<UInt8>, firstLineNumber: Int, into out: inout [UInt8]) {
        var lineStart = text.startIndex
        var lineNumber = firstLineNumber
        while lineStart < text.endIndex {
            let lineEnd = Self.newline(in: text, from: lineStart) ?? text.endIndex
            answer(text[lineStart..<lineEnd], lineNumber: lineNumber, into: &out)
            lineNumber += 1
            lineStart = lineEnd + 1
        }
    }

    /// Ends of up to `blocks` runs of whole lines of similar size covering `bytes` (which starts
    /// at 0 and ends just past a newline, or at the end of input).
    private static func blockEnds(in bytes: ArraySlice<UInt8>, blocks: Int) -> [Int] {
        let end = bytes.endIndex
        var ends: [Int] = []
        var previous = 0
        for block in 1..<blocks {
            let target = max(end * block / blocks, previous)
            guard target < end, let newline = newline(in: bytes, from: target), newline + 1 < end else { break }
            ends.append(newline + 1)
            previous = newline + 1
        }
        ends.append(end)
        return ends
    }

    /// Lines in `bytes`, a last one without its newline included.
    private static func lineCount(in bytes: ArraySlice<UInt8>) -> Int {
        var count = 0
        var position = bytes.startIndex
        while position < bytes.endIndex {
            count += 1
            guard let newline = newline(in: bytes, from: position) else { break }
            position = newline + 1
        }
        return count
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
