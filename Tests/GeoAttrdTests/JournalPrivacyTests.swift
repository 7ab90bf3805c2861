import Foundation
import GeoAttrClient
import GeoAttrModel
import Testing
import TestSupport

/// The journal at info is read by more people than the socket's exact level: it says that a fix
/// was accepted, never where, whether the device moved or crossed a border, or how precise it was.
@Suite("geoattrd journal at info")
struct JournalPrivacyTests {
    /// A static location with an error estimate, logged at info.
    static func config(latitude: Double, longitude: Double) -> String {
        FollowerTests.config(latitude: latitude, longitude: longitude) + "  error_m: 7.5\nlog:\n  level: info\n"
    }

    @Test("a border crossing at info: two fixes accepted, no movement word, no error estimate, no coordinates")
    func borderCrossingAtInfo() async throws {
        let fixture = try Fixture.build(postal: false)
        let directory = try TemporaryDirectory(prefix: "geoattrd")
        // Bigcity in country AA, then Borderton in BB.
        let daemon = try DaemonProcess(
            config: Self.config(latitude: 1.5, longitude: 1.0), arguments: ["--index", fixture.index], directory: directory)
        try await daemon.waitForGeneration()
        let client = GeoAttrClient(socketPath: daemon.socketPath)
        #expect(try await client.attributes().attributes["geo.country.iso_code"] == .string("AA"))
        try Self.config(latitude: 0.3, longitude: 2.05).write(toFile: daemon.configFile, atomically: true, encoding: .utf8)
        let reloaded = try await daemon.reload()
        #expect(reloaded.applied, "the reload was refused: \(reloaded.reason)")
        let crossed = try await client.refresh(wait: .seconds(10))
        // The control: the device did cross into BB, and the journal saw a second fix.
        #expect(crossed.text.contains(#""geo.country.iso_code":"BB""#), "\(crossed.text)")
        #expect(await eventually { daemon.count("fix accepted") >= 2 }, "\(daemon.log.text)")
        #expect(await daemon.stop() == 0)
        let journal = daemon.log.text
        for word in ["place=", "switched", "stationary", "geocoded", "error_m", "lat=", "lon=", "Bigcity", "Borderton"] {
            #expect(!journal.contains(word), "the journal at info says \(word):\n\(journal)")
        }
    }
}
