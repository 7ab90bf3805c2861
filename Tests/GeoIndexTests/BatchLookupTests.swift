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

    static func parse(_ text: String) -> [Double]? {
        BatchLookup.parseCoordinates(Array(text.utf8)[...]).map { [$0.0, $0.1] }
    }
}
