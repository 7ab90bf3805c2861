import GeoAttrClient
import GeoAttrModel
import Logging
import Testing
import TestSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// GeoAttrFollower against the real daemon: the swift-log metadata it provides follows the
/// daemon's attributes, and a missing daemon costs the application nothing.
@Suite("GeoAttrFollower")
struct FollowerTests {
    static func config(latitude: Double, longitude: Double) -> String {
        "gpsd:\n  enabled: false\nstatic:\n  latitude: \(latitude)\n  longitude: \(longitude)\n"
    }

    @Test("every log record carries the current geo.*; none before a location; the last ones while the daemon is away; a new daemon's after")
    func metadataFollowsTheDaemon() async throws {
        let fixture = try Fixture.build(postal: true)
        let directory = try TemporaryDirectory(prefix: "geoattrd")
        let followerLog = RecordedLog()
        let follower = GeoAttrFollower(
            client: GeoAttrClient(socketPath: directory.file("api.sock"), timeout: .seconds(5)),
            initialRetry: .milliseconds(50), maximumRetry: .milliseconds(200), logger: followerLog.logger)
        let records = RecordedLog()
        let logger = records.logger(metadataProvider: follower.metadataProvider)
        let following = Task { await follower.run() }
        defer { following.cancel() }

        logger.info("no daemon yet")
        #expect(records.lines.last.map { $0.metadata.keys.filter { $0.hasPrefix("geo.") } } == [])

        let first = try DaemonProcess(
            config: Self.config(latitude: 1.5, longitude: 1.0), arguments: ["--index", fixture.index], directory: directory)
        #expect(await eventually { follower.attributes["geo.country.iso_code"] == .string("AA") }, "\(first.log.text)")
        logger.info("in AA", metadata: ["request": "1"])
        let inAA = try #require(records.lines.last)
        #expect(inAA.metadata["geo.country.iso_code"] == "AA")
        #expect(inAA.metadata["geo.location.lat"] == "1.5")
        #expect(inAA.metadata["request"] == "1")
        #expect(await first.stop() == 0)
        let retriesBefore = followerLog.count(.debug, "reconnecting to geoattrd")

        // The daemon is away: records keep the attributes last received, and the follower says
        // so once per distinct failure, not at every retry.
        #expect(await eventually { followerLog.count(.debug, "reconnecting to geoattrd") >= retriesBefore + 4 })
        #expect(followerLog.count(.notice, "lost geoattrd") > 0)
        logger.info("daemon away")
        #expect(records.lines.last?.metadata["geo.country.iso_code"] == "AA")
        #expect(followerLog.count(.notice, "lost geoattrd") <= 3, "\(followerLog.lines.map(\.message))")

        // A daemon elsewhere (without the first one's cache, which it would serve for an hour).
        unlink(directory.file("state/cache.json"))
        let second = try DaemonProcess(
            config: Self.config(latitude: 1.5, longitude: 3.0), arguments: ["--index", fixture.index], directory: directory)
        #expect(await eventually { follower.attributes["geo.country.iso_code"] == .string("BB") }, "\(second.log.text)")
        logger.info("in BB")
        #expect(records.lines.last?.metadata["geo.country.iso_code"] == "BB")
        #expect(followerLog.count(.info, "following geoattrd again") >= 1)
        #expect(await second.stop() == 0)
    }
}
