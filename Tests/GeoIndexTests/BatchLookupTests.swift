#if canImport(Glibc)
import TestSupport
import Glibc
#endif
import GeoIndex
@testable import GeoIndexCLI
import Testing

/// `lookup --batch` answers every line, in order, including bad ones.
@Suite struct BatchLookupTests {
    @Test func roundTripsAHundredThousandLinesWithoutLosingOne() throws {
        let built = try Fixture.build()
        let reader = try GeoIndexReader(path: built.index)
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
        let inputPath = built.directory + "/batch-in.txt"
        let outputPath = built.directory + "/batch-out.txt"
        try Fixture.write(String(input.dropLast()), to: inputPath)  // last line without newline
        let inputFD = open(inputPath, O_RDONLY)
        let outputFD = open(outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        #expect(inputFD >= 0 && outputFD >= 0)
        let answered = try BatchLookup(reader: reader, input: inputFD, output: outputFD).run()
        close(inputFD)
        close(outputFD)
        #expect(answered == 100_000)
        let lines = String(decoding: try Fixture.readBytes(outputPath), as: UTF8.self).split(separator: "\n")
        #expect(lines.count == 100_000)
        var mismatches = 0
        for (line, prefix) in zip(lines, expected) where !line.hasPrefix(prefix) {
            mismatches += 1
            if mismatches < 5 { Issue.record("got \(line), expected prefix \(prefix)") }
        }
        #expect(mismatches == 0)
        #expect(lines[1].contains(#""geo.country.iso_code":"AA""#))
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
