#if canImport(Glibc)
import TestSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
#endif
import Foundation
import GeoIndex
@testable import GeoIndexCLI
import Synchronization
import Testing

/// `lookup --batch` answers every line, in order, including bad ones.
@Suite struct BatchLookupTests {
    /// `lines` lines, one in 500 bad, the last without its newline, with the prefix each answer must have.
    static func mixedInput(lines: Int = 100_000) -> (text: String, expected: [String]) {
        var input = ""
        var expected: [String] = []
        for i in 0..<lines {
            switch i % 1000 {
            case 7:
                input += "not a coordinate\n"
                expected.append(#"{"error":"expected `lat,lon` with decimal degrees","line":\#(i + 1)"#)
            case 13:
                input += "95,10\r\n"
                expected.append(#"{"error":"coordinates out of range"#)
            default:
                let lat = Double(i % 200) / 100  // 0 ... 1.99
                let lon = Double(i % 300) / 75  // 0 ... 3.99
                input += "\(lat), \(lon)\n"
                expected.append(#"{"lat":\#(lat),"lon":\#(lon)"#)
            }
        }
        return (String(input.dropLast()), expected)  // last line without newline
    }

    /// Runs a batch from `inputPath` into a fresh file; returns the lines answered and the output.
    /// With `maximumPiece` > 0 the input comes through a pipe that another thread writes in pieces
    /// of 1 to `maximumPiece` bytes, so rounds see partial lines and whatever happens to be ready.
    static func runBatch(
        _ reader: GeoIndexReader, inputPath: String, outputPath: String, jobs: Int = 1, blockBytes: Int = 1 << 20,
        maximumPiece: Int = 0, seed: UInt64 = 0
    ) throws -> (Int, [UInt8]) {
        let inputFD = maximumPiece > 0 ? try writeThroughPipe(try Fixture.readBytes(inputPath), maximumPiece: maximumPiece, seed: seed) : open(inputPath, O_RDONLY)
        let outputFD = open(outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        #expect(inputFD >= 0 && outputFD >= 0)
        defer {
            close(inputFD)
            close(outputFD)
        }
        let answered = try BatchLookup(reader: reader, input: inputFD, output: outputFD, jobs: jobs, blockBytes: blockBytes).run()
        return (answered, try Fixture.readBytes(outputPath))
    }

    /// The reference for what the rounds must write: the whole file at once, each line parsed and
    /// answered on its own, in input order, on one thread.
    static func lineByLine(_ reader: GeoIndexReader, inputPath: String) throws -> (Int, [UInt8]) {
        let bytes = try Fixture.readBytes(inputPath)
        var out: [UInt8] = []
        var lines = 0
        bytes.withUnsafeBufferPointer { buffer in
            var start = 0
            while start < buffer.count {
                let end = buffer[start...].firstIndex(of: 0x0A) ?? buffer.count
                lines += 1
                BatchLookup.answer(ParsedLine(buffer, line: start..<end), in: buffer, lineNumber: lines, reader: reader, into: &out)
                start = end + 1
            }
        }
        return (lines, out)
    }

    /// The read end of a pipe into which a thread writes `bytes` in random pieces, then closes it.
    static func writeThroughPipe(_ bytes: [UInt8], maximumPiece: Int, seed: UInt64) throws -> Int32 {
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        let writeEnd = ends[1]
        let writer = Thread {
            var random = SplitMix64(seed: seed)
            var offset = 0
            while offset < bytes.count {
                let piece = min(Int(random.next() % UInt64(maximumPiece)) + 1, bytes.count - offset)
                let written = bytes.withUnsafeBytes { raw in raw.baseAddress.map { write(writeEnd, $0 + offset, piece) } ?? -1 }
                if written <= 0 { break }
                offset += written
            }
            close(writeEnd)
        }
        writer.start()
        return ends[0]
    }

    @Test func roundTripsAHundredThousandLinesWithoutLosingOne() throws {
        let built = try Fixture.build()
        let reader = try GeoIndexReader(path: built.index)
        let (input, expected) = Self.mixedInput()
        let inputPath = built.directory + "/batch-in.txt"
        try Fixture.write(input, to: inputPath)
        let (answered, output) = try Self.runBatch(reader, inputPath: inputPath, outputPath: built.directory + "/batch-out.txt")
        #expect(answered == 100_000)
        let lines = String(decoding: output, as: UTF8.self).split(separator: "\n")
        #expect(lines.count == 100_000)
        var mismatches = 0
        for (line, prefix) in zip(lines, expected) where !line.hasPrefix(prefix) {
            mismatches += 1
            if mismatches < 5 { Issue.record("got \(line), expected prefix \(prefix)") }
        }
        #expect(mismatches == 0)
        #expect(lines[1].contains(#""geo.country.iso_code":"AA""#))
    }

    static func expectIdentical(_ got: (Int, [UInt8]), _ reference: (Int, [UInt8]), _ context: String) {
        #expect(got.0 == reference.0, "\(context): \(got.0) lines answered, \(reference.0) line by line")
        let identical = got.1 == reference.1  // a Bool, so a failure prints the message and not megabytes of bytes
        let difference = zip(got.1, reference.1).enumerated().first { $0.element.0 != $0.element.1 }?.offset
        #expect(identical, "\(context): \(got.1.count) bytes against \(reference.1.count), first difference at \(difference ?? min(got.1.count, reference.1.count))")
    }

    @Test(
        "rounds looked up in spatial order, on one job or several, write exactly what answering line by line writes, from a file or a pipe written in small pieces",
        arguments: [
            (1, 1 << 20, 0, 100_000), (2, 1 << 20, 0, 100_000), (3, 4096, 0, 20_000), (1, 4096, 1000, 20_000), (2, 1 << 18, 1000, 20_000),
            (3, 97, 300, 10_000), (5, 1, 7, 2_000),
        ])
    func roundOutputIsTheLineByLineOutput(jobs: Int, blockBytes: Int, maximumPiece: Int, lines: Int) throws {
        let built = try Fixture.build()
        let reader = try GeoIndexReader(path: built.index)
        let inputPath = built.directory + "/batch-in.txt"
        try Fixture.write(Self.mixedInput(lines: lines).text, to: inputPath)
        let serial = try Self.lineByLine(reader, inputPath: inputPath)
        #expect(serial.0 == lines)
        let parallel = try Self.runBatch(
            reader, inputPath: inputPath, outputPath: built.directory + "/parallel.txt", jobs: jobs, blockBytes: blockBytes,
            maximumPiece: maximumPiece, seed: UInt64(jobs * 1_000 + maximumPiece))
        Self.expectIdentical(parallel, serial, "\(jobs) jobs, \(blockBytes)-byte blocks, pieces up to \(maximumPiece)")
    }

    @Test("edge inputs: nothing, empty lines, no final newline, a line longer than a round")
    func parallelEdgeInputs() throws {
        let built = try Fixture.build()
        let reader = try GeoIndexReader(path: built.index)
        let longLine = String(repeating: "9", count: 300_000)
        let inputs = ["", "\n", "\n\n", "1,1", "1,1\n", "\n\n1,1\r\n0.5,0.5", "1,1\n\(longLine)\n2,2\n\(longLine)"]
        for (index, text) in inputs.enumerated() {
            let inputPath = built.directory + "/edge-\(index).txt"
            try Fixture.write(text, to: inputPath)
            let serial = try Self.lineByLine(reader, inputPath: inputPath)
            #expect(serial.0 == text.utf8.split(separator: 0x0A, omittingEmptySubsequences: false).count - (text.hasSuffix("\n") || text.isEmpty ? 1 : 0))
            for (jobs, maximumPiece) in [(1, 0), (2, 0), (2, 5), (3, 4096)] {
                let got = try Self.runBatch(
                    reader, inputPath: inputPath, outputPath: built.directory + "/edge-got.txt", jobs: jobs, blockBytes: 64,
                    maximumPiece: maximumPiece, seed: UInt64(index))
                Self.expectIdentical(got, serial, "input \(index), \(jobs) jobs, pieces up to \(maximumPiece)")
            }
        }
    }

    @Test("a round is looked up in Z-order: neighbours together, lines that are not coordinates last, ties in input order")
    func spatialOrderGroupsNeighbours() {
        let text = Array("10,10\n-10,-10\nx\n10.001,10.001\n-10.001,-10.001\n10,10\n".utf8)[...]
        let lines = BatchLookup.lineRanges(in: text)
        #expect(lines.count == 6)
        for blocks in [1, 2, 6] {
            #expect(BatchRound.order(of: BatchRound.parse(Array(text), lines: lines, blocks: blocks)) == [4, 1, 0, 5, 3, 2], "\(blocks) blocks")
        }
        // A track (most lines next to the one before) keeps its order, though Z-order would not.
        let track = Array("0.001,0.001\n0.0011,0.0011\n-0.001,-0.001\n-0.0011,-0.0011\n".utf8)[...]
        let trackLines = BatchLookup.lineRanges(in: track)
        #expect(BatchRound.order(of: BatchRound.parse(Array(track), lines: trackLines, blocks: 2)) == [0, 1, 2, 3])
        let shuffled = Array("0.001,0.001\n-0.001,-0.001\n0.0011,0.0011\n-0.0011,-0.0011\n".utf8)[...]
        #expect(BatchRound.order(of: BatchRound.parse(Array(shuffled), lines: BatchLookup.lineRanges(in: shuffled), blocks: 2)) == [1, 3, 0, 2])
        #expect(SpatialOrder.zOrder(latitude: -90, longitude: -180) == 0)
        #expect(SpatialOrder.zOrder(latitude: 90, longitude: 180) == UInt32.max)
    }

    @Test("each line is answered before the next is written, as a co-process needs", arguments: [1, 2])
    func answersInteractively(jobs: Int) throws {
        let built = try Fixture.build()
        let reader = try GeoIndexReader(path: built.index)
        var toBatch: [Int32] = [0, 0]
        var fromBatch: [Int32] = [0, 0]
        #expect(pipe(&toBatch) == 0 && pipe(&fromBatch) == 0)
        let batch = BatchLookup(reader: reader, input: toBatch[0], output: fromBatch[1], jobs: jobs)
        let answered = Mutex<Int?>(nil)
        let outputEnd = fromBatch[1]
        let thread = Thread {
            let count = (try? batch.run()) ?? -1
            answered.withLock { $0 = count }
            close(outputEnd)
        }
        thread.start()
        let questions = [("1,1\n", #"{"lat":1,"lon":1,"#), ("0.5,0.25\n", #"{"lat":0.5,"lon":0.25,"#), ("x\n", #"{"error":"expected `lat,lon` with decimal degrees","line":3"#)]
        for (question, answer) in questions {
            #expect(write(toBatch[1], question, question.utf8.count) == question.utf8.count)
            // Generous: this only keeps a broken batch from hanging the suite.
            let line = Self.readLine(fromBatch[0], timeoutMilliseconds: 20_000)
            #expect(line.text?.hasPrefix(answer) == true, "\(question): \(line.text ?? (line.timedOut ? "no answer in 20 s" : "end of output"))")
            if line.text == nil { break }
        }
        close(toBatch[1])
        // The batch returns at the end of its input and closes its output.
        let end = Self.readLine(fromBatch[0], timeoutMilliseconds: 20_000)
        #expect(end.text == nil && !end.timedOut, "expected the end of output, got \(end.text ?? "no end in 20 s")")
        if !end.timedOut {
            #expect(answered.withLock { $0 } == 3)
            close(fromBatch[0])
        }  // else the batch may still write: its pipe is left open rather than risk SIGPIPE
        close(toBatch[0])
    }

    /// One line from `fd`; nil at end of file or when nothing arrives in time (`timedOut`).
    static func readLine(_ fd: Int32, timeoutMilliseconds: Int32) -> (text: String?, timedOut: Bool) {
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while true {
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, timeoutMilliseconds) > 0 else { return (nil, true) }
            guard read(fd, &byte, 1) == 1 else { return (nil, false) }
            if byte == 0x0A { return (String(decoding: line, as: UTF8.self), false) }
            line.append(byte)
        }
    }

    @Test func parsesCoordinatesLeniently() {
        #expect(BatchLookupTests.parse(" 12.5 ,-3") == [12.5, -3])
        #expect(BatchLookupTests.parse("12.5") == nil)
        #expect(BatchLookupTests.parse("a,b") == nil)
        #expect(BatchLookupTests.parse(",") == nil)
    }

    @Test("numbers read without strtod are bit for bit the numbers strtod reads")
    func exactDecimalsAgreeWithStrtod() {
        let edges = [
            "0", "-0", "0.0", "-0.0", "1.", ".5", "-.5", ".", "-", "", "00.5", "007", "+1", "1e3", "1E-3", "inf", "nan",
            "0x1p3", "1..2", "1.2.3", "-90", "180", "89.99999999999999", "123456789012345", "1234567890123456",
            "0.0000000000000000000001", "0.00000000000000000000001", "-179.999999999999", "12 5", "1,5", "٣",
        ]
        for text in edges {
            let bytes = Array(text.utf8)[...]
            let parsed = BatchLookup.parseNumber(bytes)
            let reference = Double(text)
            #expect(parsed?.bitPattern == reference?.bitPattern, "\(text): \(String(describing: parsed)) != \(String(describing: reference))")
        }
        #expect(BatchLookup.exactDecimal([UInt8]()[...]) == nil)
        // Coordinates as receivers and exporters write them: 0 to 15 decimals, either sign.
        var random = SplitMix64(seed: 0x6765_6f61_7474_72)
        var fastPathHits = 0
        for _ in 0..<200_000 {
            let decimals = Int(random.next() % 16)
            let whole = random.next() % 181
            let fraction = random.next() % 1_000_000_000_000_000
            var text = random.next() % 2 == 0 ? "-" : ""
            text += String(whole)
            if decimals > 0 {
                let digits = String(fraction)
                text += "." + String((String(repeating: "0", count: max(0, 15 - digits.count)) + digits).prefix(decimals))
            }
            let bytes = Array(text.utf8)[...]
            if BatchLookup.exactDecimal(bytes) != nil { fastPathHits += 1 }
            let agrees = BatchLookup.parseNumber(bytes)?.bitPattern == Double(text)?.bitPattern
            #expect(agrees, "\(text)")
            if !agrees { break }
        }
        // Most of them take the fast path (the rest have more than 15 significant digits).
        #expect(fastPathHits > 150_000)
    }

    static func parse(_ text: String) -> [Double]? {
        BatchLookup.parseCoordinates(Array(text.utf8)[...]).map { [$0.0, $0.1] }
    }
}
