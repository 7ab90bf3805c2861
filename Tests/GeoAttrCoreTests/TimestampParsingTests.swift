import Foundation
import GeoAttrCore
import GeoAttrLinux
import GeoAttrModel
import Testing
import TestSupport

/// ISO 8601 times as the cache file and the API carry them; cases the fuzzer found
/// (scripts/fuzz.sh cache).
@Suite("Timestamp parsing")
struct TimestampParsingTests {
    @Test("fractions of one to nine digits", arguments: [
        ("2026-11-21T08:01:01.6Z", 600_000_000), ("2026-11-21T08:01:01.615Z", 615_000_000),
        ("2026-11-21T08:01:01.123456789Z", 123_456_789),
    ])
    func fractions(text: String, nanoseconds: Int32) {
        #expect(UTCTimestamp(iso8601: text) == UTCTimestamp(seconds: 1_795_248_061, nanoseconds: nanoseconds))
    }

    /// Ten fraction digits once trapped (a negative range) instead of being refused.
    @Test("more than nine fraction digits are refused", arguments: [
        "2026-11-21T08:01:01.0123456789Z", "5866-11-20T08:01:01.6666666615Z", "2026-11-21T08:01:01.12345678901Z",
    ])
    func tooManyDigits(text: String) {
        #expect(UTCTimestamp(iso8601: text) == nil)
    }

    /// The fuzzer's input: a cache whose fix time has ten fraction digits is set aside as corrupt
    /// (the daemon used to crash at every start until the file was removed).
    @Test func cacheWithTenFractionDigitsIsCorrupt() throws {
        let directory = try TemporaryDirectory()
        let cache = CacheFile(directory: directory.path)
        let content = #"{"result":{"fix":{"lat":-33.8688,"lon":151.2093,"mode":2,"origin":"static","#
            + #""received_at":"2026-11-21T08:01:01.0123456789Z","time_source":"system-clock"},"generation":7,"#
            + #""source":"static","updated_at":"2026-11-21T08:01:01.615Z"},"schema":1}"#
        try content.write(toFile: cache.path, atomically: true, encoding: .utf8)
        #expect(throws: CacheFileError.self) { try cache.load() }
        #expect(FileManager.default.fileExists(atPath: cache.setAsidePath))
    }
}
