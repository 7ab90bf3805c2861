#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import GeoIndex

/// `lookup --batch`: `lat,lon` lines in, one JSON object per line out, in input order.
///
/// Output is buffered for throughput and flushed whenever no more input is ready, so the
/// command also works interactively and as a co-process. A bad line yields a JSON error
/// object for that line; the run continues.
///
/// The lines that are ready (up to a round) are parsed once, sorted along a space-filling curve,
/// cut into a few blocks per job, looked up (in parallel with more than one job) and written in
/// input order before more input is read. Nearby points share index pages, so a sorted round
/// runs faster than the same lines in their own order; the output is the same.
public struct BatchLookup: Sendable {
    public enum Failure: Error, CustomStringConvertible {
        case read(errno: Int32)
        case write(errno: Int32)
        /// The index file changed under its mapping: the round that found it is not written.
        case index(GeoIndexError)

        public var description: String {
            switch self {
            case .read(let code): return "reading input failed (errno \(code))"
            case .write(let code): return "writing output failed (errno \(code)); is the reader of the output gone?"
            case .index(let error): return error.description
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
    /// A round's input at most, whatever the jobs: its output (about 12 times as many bytes) is
    /// held until the round is written.
    static let maximumRoundBytes = 1 << 21

    /// - Parameters:
    ///   - jobs: threads looking up at once; 1 answers on the calling thread alone.
    ///   - blockBytes: input per job and round (tests make it small).
    public init(
        reader: GeoIndexReader, input: Int32 = STDIN_FILENO, output: Int32 = STDOUT_FILENO, jobs: Int = 1,
        blockBytes: Int = 1 << 20
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
        var source = BatchInput(descriptor: input)
        var sink = BatchOutput(descriptor: output)
        var answered = 0
        while let round = try source.nextRound(upTo: min(jobs * blockBytes, Self.maximumRoundBytes)) {
            let lines = Self.lineRanges(in: round[...])
            try BatchRound(bytes: round, lines: lines, jobs: jobs, firstLineNumber: answered + 1, reader: reader).answer(to: &sink)
            try sink.flush()
            answered += lines.count
        }
        return answered
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

    /// The index of the first newline in `bytes` at or after `start`, found with memchr.
    static func newline(in bytes: ArraySlice<UInt8>, from start: Int) -> Int? {
        bytes.withUnsafeBytes { raw -> Int? in
            let offset = start - bytes.startIndex
            guard offset < raw.count, let base = raw.baseAddress, let found = memchr(base + offset, 0x0A, raw.count - offset) else {
                return nil
            }
            return bytes.startIndex + base.distance(to: UnsafeRawPointer(found))
        }
    }
}
