import GeoAttrCore
import GeoAttrModel
import Testing

@Suite("StaticFixSource")
struct StaticFixSourceTests {
    @Test func servesTheConfiguredLocation() async throws {
        let before = UTCTimestamp.now()
        let source = try StaticFixSource(latitude: 47.3769, longitude: 8.5417, altitudeMeters: 408, horizontalErrorMeters: 25)
        let fix = try await source.fix()
        #expect(fix.latitude == 47.3769 && fix.longitude == 8.5417)
        #expect(fix.altitudeMeters == 408)
        #expect(fix.mode == .threeDimensional)
        #expect(fix.horizontalErrorMeters == 25)
        #expect(fix.origin == .static)
        #expect(fix.timeSource == .systemClock)
        #expect(fix.receivedAt >= before)
    }

    @Test func withoutAltitudeItIsTwoDimensional() async throws {
        let fix = try await StaticFixSource(latitude: -41.29, longitude: 174.78).fix()
        #expect(fix.mode == .twoDimensional)
        #expect(fix.horizontalErrorMeters == nil)
    }

    @Test("implausible static locations are refused with a clear error", arguments: [
        (0.0, 0.0), (95.0, 1.0), (10.0, -200.0), (Double.nan, 1.0),
    ])
    func refusesImplausibleLocations(latitude: Double, longitude: Double) {
        #expect(throws: StaticFixSource.ConfigurationError.self) {
            try StaticFixSource(latitude: latitude, longitude: longitude)
        }
    }

    @Test func refusesNegativeAccuracy() {
        #expect(throws: StaticFixSource.ConfigurationError.negativeError(-1)) {
            try StaticFixSource(latitude: 1, longitude: 1, horizontalErrorMeters: -1)
        }
    }

    @Test func cancelledBeforeStartThrowsCancelled() async {
        guard let source = try? StaticFixSource(latitude: 1, longitude: 1) else {
            Issue.record("a valid static location was refused")
            return
        }
        let task = Task { () async -> FixError? in
            withUnsafeCurrentTask { $0?.cancel() }
            do throws(FixError) {
                _ = try await source.fix()
                return nil
            } catch {
                return error
            }
        }
        #expect(await task.value == .cancelled)
    }
}

@Suite("UTCTimestamp")
struct UTCTimestampTests {
    @Test func formatsAndParsesISO8601() {
        #expect(UTCTimestamp(seconds: 0).iso8601 == "1970-01-01T00:00:00Z")
        #expect(UTCTimestamp(seconds: 1_795_000_000, nanoseconds: 250_000_000).iso8601 == "2026-11-18T11:06:40.250Z")
        #expect(UTCTimestamp(seconds: 951_782_400).iso8601 == "2000-02-29T00:00:00Z")
        #expect(UTCTimestamp(seconds: -1).iso8601 == "1969-12-31T23:59:59Z")
        for seconds: Int64 in [0, 951_782_400, 1_795_000_000, 4_102_444_800] {
            let time = UTCTimestamp(seconds: seconds, nanoseconds: 125_000_000)
            #expect(UTCTimestamp(iso8601: time.iso8601) == time)
        }
        #expect(UTCTimestamp(iso8601: "2026-13-01T00:00:00Z") == nil)
        #expect(UTCTimestamp(iso8601: "2026-11-21 12:00:00Z") == nil)
        #expect(UTCTimestamp(iso8601: "garbage") == nil)
    }

    @Test func normalisesNanoseconds() {
        #expect(UTCTimestamp(seconds: 10, nanoseconds: -1) == UTCTimestamp(seconds: 9, nanoseconds: 999_999_999))
        #expect(UTCTimestamp(nanosecondsSinceEpoch: 1_500_000_000) == UTCTimestamp(seconds: 1, nanoseconds: 500_000_000))
    }
}
