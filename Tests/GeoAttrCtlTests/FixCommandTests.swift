import Foundation
import Testing
import TestSupport

/// `geoattrctl fix` as users run it: the built binary against a real gpsd.
@Suite("geoattrctl fix")
struct FixCommandTests {
    static let geoattrctl = BuiltProducts.path(of: "geoattrctl")
    static let position = (latitude: 52.5162746, longitude: 13.3777041)

    func json(_ text: String) throws -> [String: Any] {
        let object = try JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])
        return try #require(object as? [String: Any])
    }

    @Test("prints one JSON object with the track's position to 1e-6 degrees")
    func printsTheFix() async throws {
        let epoch = NMEATrack.Epoch(latitude: Self.position.latitude, longitude: Self.position.longitude, mode: 3)
        try await GPSFake.run(nmea: NMEATrack(epochs: NMEATrack.repeating(epoch, 20)).render(), once: false) { gpsfake in
            let result = try await CommandResult.run(Self.geoattrctl, ["fix", "--gpsd", gpsfake.endpoint, "--timeout", "20"])
            #expect(result.status == 0, "stderr: \(result.stderr)")
            let lines = result.stdout.split(separator: "\n")
            #expect(lines.count == 1)
            let object = try json(String(lines.first ?? ""))
            #expect(Set(object.keys) == ["lat", "lon", "alt_m", "mode", "error_m", "time", "time_to_fix_ms", "fallback"])
            #expect(object["fallback"] as? Bool == false)
            let lat = try #require(object["lat"] as? Double)
            let lon = try #require(object["lon"] as? Double)
            #expect(abs(lat - Self.position.latitude) < 1e-6)
            #expect(abs(lon - Self.position.longitude) < 1e-6)
            #expect(object["mode"] as? Int == 3)
            #expect(object["alt_m"] as? Double == 50)
            #expect((object["time_to_fix_ms"] as? Double ?? -1) > 0)
            // gpsd reports no time before its first RMC: then "time" is null, else ISO 8601.
            if let time = object["time"] as? String {
                #expect(time.hasPrefix("2026-11-21T12:00:") && time.hasSuffix("Z"))
            } else {
                #expect(object["time"] is NSNull)
            }
        }
    }

    @Test("gpsd absent: exit 69 within the timeout, one line on stderr")
    func gpsdAbsent() async throws {
        let port = try Loopback.freePort()
        let result = try await CommandResult.run(Self.geoattrctl, ["fix", "--gpsd", "127.0.0.1:\(port)", "--timeout", "120"])
        #expect(result.status == 69)
        #expect(result.stdout.isEmpty)
        let errorLines = result.stderr.split(separator: "\n")
        #expect(errorLines.count == 1)
        #expect(result.stderr.contains("unreachable"))
        // Refused at once, not after the timeout (a loose bound for a loaded machine, looser
        // under a sanitizer: TestTiming).
        #expect(result.elapsed < .seconds(15 * TestTiming.scale))
    }

    @Test("gpsd closes the connection after a fallback-eligible report: that fix, exit 0, marked as a fallback")
    func fallbackWhenGPSDCloses() async throws {
        let coarse = NMEATrack.Epoch(latitude: Self.position.latitude, longitude: Self.position.longitude, mode: 3, hdop: 15)  // 285 m
        try await GPSFake.run(nmea: NMEATrack(epochs: NMEATrack.repeating(coarse, 400)).render(), gpsdDebugLevel: 4) { gpsfake in
            async let running = CommandResult.run(Self.geoattrctl, ["fix", "--gpsd", gpsfake.endpoint, "--timeout", "300"])
            // gpsd goes away once it has sent the CLI coarse reports, and only those.
            let client = try #require(await gpsfake.clientUnderTest(), "the CLI never watched")
            let sent = await eventually(timeout: .seconds(20)) { gpsfake.reportsSent(to: client).count >= 2 }
            try #require(sent, "gpsd sent the CLI no reports")
            await gpsfake.stop()
            let result = try await running
            #expect(result.status == 0, "stderr: \(result.stderr)")
            let object = try json(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
            #expect(object["fallback"] as? Bool == true)
            let error = try #require(object["error_m"] as? Double)
            #expect(error > 100 && error <= 500)
            #expect(result.elapsed < .seconds(30 * TestTiming.scale))
        }
    }

    @Test("the track never gets a fix: exit 75 within the timeout")
    func neverGetsFix() async throws {
        var noFix = NMEATrack.noFix(satellitesInView: 6, withSignal: 3)
        noFix.hdop = nil
        try await GPSFake.run(nmea: NMEATrack(epochs: NMEATrack.repeating(noFix, 60)).render()) { gpsfake in
            let result = try await CommandResult.run(Self.geoattrctl, ["fix", "--gpsd", gpsfake.endpoint, "--timeout", "3"])
            #expect(result.status == 75, "stderr: \(result.stderr)")
            #expect(result.stdout.isEmpty)
            #expect(result.stderr.contains("no acceptable fix within 3 s"))
            #expect(result.elapsed < .seconds(15 * TestTiming.scale))
        }
    }

    @Test("invalid arguments: exit 64 and a message naming the option", arguments: [
        ["fix", "--gpsd", "nohost:"], ["fix", "--timeout", "-1"], ["fix", "--min-mode", "4"],
    ])
    func invalidArguments(arguments: [String]) async throws {
        let result = try await CommandResult.run(Self.geoattrctl, arguments)
        #expect(result.status == 64)
        #expect(result.stderr.contains("--"))
    }
}
