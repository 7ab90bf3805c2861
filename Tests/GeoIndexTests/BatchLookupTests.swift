#if canImport(Glibc)
import TestSupport
import Glibc
#endif
import Foundation
import GeoIndex
@testable import GeoIndexCLI
import Synchronization
import Testing

/// `lookup --batch` answers every line, in order, including bad ones.
@Suite struct BatchLookupTests {
    /// 100,000 lines, one in 500 bad, the last without its newline, with the prefix each answer must have.
    static func mixedInput() -> (text: String, expected: [String]) {
        var input = ""
        var expected: [String] = []
        for i in 0..<100_000 {
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
    static func runBatch(_ reader: GeoIndexReader, inputPath: String, outputPath: String, jobs: Int = 1, blockBytes: Int = 1 << 18) throws -> (Int, [UInt8]) {
        let inputFD = open(inputPath, O_RDONLY)
        let outputFD = open(outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        #expect(inputFD >= 0 && outputFD >= 0)
        defer {
            close(inputFD)
            close(outputFD)
        }
        let answered = try BatchLookup(reader: reader, input: inputFD, output: outputFD, jobs: jobs, blockBytes: blockBytes).run()
        return (answered, try Fixture.readBytes(outputPath))
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

    @Test("parallel jobs write exactly what one job writes, whatever the block size", arguments: [(2, 1 << 18), (3, 4096), (2, 97), (5, 1)])
    func parallelOutputIsTheSerialOutput(jobs: Int, blockBytes: Int) throws {
        let built = try Fixture.build()
        let reader = try GeoIndexReader(path: built.index)
        let inputPath = built.directory + "/batch-in.txt"
        try Fixture.write(Self.mixedInput().text, to: inputPath)
        let (serialCount, serial) = try Self.runBatch(reader, inputPath: inputPath, outputPath: built.directory + "/serial.txt")
        let (parallelCount, parallel) = try Self.runBatch(
            reader, inputPath: inputPath, outputPath: built.directory + "/parallel.txt", jobs: jobs, blockBytes: blockBytes)
        #expect(serialCount == 100_000)
        #expect(parallelCount == serialCount)
        #expect(parallel.count == serial.count)
        let identical = parallel == serial  // a Bool, so a failure prints the message and not 15 MB of bytes
        #expect(identical, "first difference at byte \(zip(parallel, serial).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(parallel.count, serial.count))")
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
            answered.withLock { $0 = (try? batch.run()) ?? -1 }
            close(outputEnd)
        }
        thread.start()
        defer {
            close(toBatch[1])
            close(fromBatch[0])
            close(toBatch[0])
        }
        for (question, answer) in [("1,1\n", #"{"lat":1,"lon":1,"#), ("0.5,0.25\n", #"{"lat":0.5,"lon":0.25,"#), ("x\n", #"{"error""#)] {
            #expect(write(toBatch[1], question, question.utf8.count) == question.utf8.count)
            // Generous: this only keeps a broken batch from hanging the suite.
            let line = Self.readLine(fromBatch[0], timeoutMilliseconds: 20_000)
            #expect(line?.hasPrefix(answer) == true, "\(question): \(line ?? "no answer")")
            if line == nil { break }
        }
        close(toBatch[1])
        toBatch[1] = -1
        #expect(Self.readLine(fromBatch[0], timeoutMilliseconds: 20_000) == nil)  // end of output: the batch returned
        #expect(answered.withLock { $0 } == 3)
    }

    /// One line from `fd`, or nil at end of file or when nothing arrives in time.
    static func readLine(_ fd: Int32, timeoutMilliseconds: Int32) -> String? {
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while true {
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, timeoutMilliseconds) > 0, read(fd, &byte, 1) == 1 else { return nil }
            if byte == 0x0A { return String(decoding: line, as: UTF8.self) }
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
