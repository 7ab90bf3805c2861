import Foundation
import Testing
import TestSupport

/// Every part logs through the daemon's one logger; the journal still says which part speaks,
/// after the daemon's label, as operators' filters (`grep geoattrd.index:`) expect.
@Suite("geoattrd journal labels")
struct JournalLabelTests {
    @Test("each part's lines start with geoattrd.PART:, the daemon's own with geoattrd:, and none carries the part as a field")
    func partsAreNamedAfterTheLabel() async throws {
        let directory = try TemporaryDirectory(prefix: "geoattrd")
        // Writable by others: the outputs warn about it, at start.
        let shared = directory.file("shared")
        try FileManager.default.createDirectory(atPath: shared, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o777])
        let daemon = try DaemonProcess(
            config: APIProcessTests.staticConfig + "outputs:\n  env_file: \(shared)/geo.env\nlog:\n  level: debug\n",
            directory: directory, environment: ["JOURNAL_STREAM": "8:1"])
        _ = try #require(await daemon.waitForLog("fix accepted"), "\(daemon.log.text)")
        _ = try #require(await daemon.waitForLog("watching the state file"), "\(daemon.log.text)")
        #expect(await daemon.stop() == 0)
        let lines = daemon.log.all.map(\.text)
        for start in [
            "<3>geoattrd.index: geocoder index refused", "<6>geoattrd.api: API listening",
            "<7>geoattrd.state: watching the state file", "<4>geoattrd.outputs: output directory is writable by other users",
            "<6>geoattrd: geoattrd started", "<6>geoattrd: fix accepted", "<6>geoattrd.api: API: closing the sockets",
        ] {
            #expect(lines.contains { $0.hasPrefix(start) }, "no line starts with \(start):\n\(daemon.log.text)")
        }
        #expect(!daemon.log.text.contains("component="), "\(daemon.log.text)")
    }
}
