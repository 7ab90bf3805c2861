import Foundation
import GeoAttrClient
import GeoAttrModel
import Testing
import TestSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The daemon with real indexes (small ones the test builds from synthetic sources): geocoded
/// attributes, a replacement swapped in by rename, a corrupt replacement refused.
@Suite("geoattrd index swap")
struct IndexSwapTests {
    @Test("a replaced index is swapped in without a failed lookup; a corrupt one is refused and the old stays")
    func swapAndRefuse() async throws {
        let withoutPostal = try Fixture.build(postal: false)
        let withPostal = try Fixture.build(postal: true)
        let directory = try TemporaryDirectory(prefix: "geoattrd")
        let index = directory.file("area.gidx")
        try FileManager.default.copyItem(atPath: withoutPostal.index, toPath: index)
        // Inside the fixture's country AA, region AA-N, at Bigcity.
        let daemon = try DaemonProcess(
            config: "gpsd:\n  enabled: false\nstatic:\n  latitude: 1.5\n  longitude: 1.0\n",
            arguments: ["--index", index], directory: directory)
        let started = try await daemon.waitForGeneration()
        let firstVersion = try #require(started.indexVersion, "no index in service: \(daemon.log.text)")
        let client = GeoAttrClient(socketPath: daemon.socketPath)
        let first = try await client.attributes()
        #expect(first.attributes["geo.country.iso_code"] == .string("AA"))
        #expect(first.attributes["geo.region.iso_code"] == .string("AA-N"))
        #expect(first.attributes["geo.locality.name"] == .string("Bigcity"))
        #expect(first.attributes["geo.postal_code"] == nil)

        // Poll while the index is replaced: every answer must stay geocoded.
        let poller = Task { () -> [String] in
            var failures: [String] = []
            while !Task.isCancelled {
                do {
                    let document = try await client.attributes()
                    if document.attributes["geo.country.iso_code"] != .string("AA") { failures.append("\(document.attributes)") }
                } catch {
                    // The request in flight when the poller is cancelled ends with "cancelled".
                    if !Task.isCancelled { failures.append("\(error)") }
                }
            }
            return failures
        }
        try FileManager.default.copyItem(atPath: withPostal.index, toPath: directory.file("area.gidx.new"))
        #expect(rename(directory.file("area.gidx.new"), index) == 0)
        // The replacement is another file (its size is in the version): a new version, no problem.
        let swapped = try await daemon.waitForStatus("an index other than \(firstVersion) in service") {
            $0.indexVersion != nil && $0.indexVersion != firstVersion && $0.indexProblem == nil
        }
        let swappedVersion = try #require(swapped.indexVersion)
        let refreshed = try await client.refresh(wait: .seconds(5))
        #expect(refreshed.text.contains("\"geo.postal_code\":\"A-100\""), "\(refreshed.text)")
        poller.cancel()
        let failures = await poller.value
        #expect(failures.isEmpty, "answers without the country while the index was swapped: \(failures.prefix(3))")

        // A corrupt replacement: refused, and the index in service stays.
        var corrupt = try Fixture.readBytes(withPostal.index)
        corrupt.removeLast(corrupt.count / 2)
        try Fixture.writeBytes(corrupt, to: directory.file("area.gidx.new"))
        #expect(rename(directory.file("area.gidx.new"), index) == 0)
        let refused = try await daemon.waitForStatus("the replacement refused") { $0.indexProblem != nil }
        #expect(refused.indexVersion == swappedVersion, "the index in service changed with the refusal: \(String(describing: refused.indexVersion))")
        let after = try await client.refresh(wait: .seconds(5))
        #expect(after.text.contains("\"geo.postal_code\":\"A-100\""))
        let status = try await client.status().text
        #expect(status.contains("\"index_version\":\"area.gidx format"))
        #expect(await daemon.stop() == 0)
    }

    @Test("an index cut short under the daemon's mapping kills nothing: coordinates alone, then the whole file again")
    func indexShrunkUnderTheMapping() async throws {
        let fixture = try Fixture.build(postal: false)
        let directory = try TemporaryDirectory(prefix: "geoattrd")
        let index = directory.file("area.gidx")
        try FileManager.default.copyItem(atPath: fixture.index, toPath: index)
        let whole = try Fixture.readBytes(index)
        func at(_ latitude: Double, _ longitude: Double) -> String {
            "gpsd:\n  enabled: false\nstatic:\n  latitude: \(latitude)\n  longitude: \(longitude)\n"
        }
        let daemon = try DaemonProcess(config: at(1.5, 1.0), arguments: ["--index", index], directory: directory)
        let started = try await daemon.waitForGeneration()
        let version = try #require(started.indexVersion, "no index in service: \(daemon.log.text)")
        let client = GeoAttrClient(socketPath: daemon.socketPath)
        #expect(try await client.attributes().attributes["geo.country.iso_code"] == .string("AA"))

        // Cut short in place, as a copy over it does first (truncate(2) raises no inotify event:
        // the index in service is the same mapping, now short), then a fix elsewhere (BB).
        #expect(truncate(index, 4096) == 0)
        try at(1.0, 3.0).write(toFile: daemon.configFile, atomically: true, encoding: .utf8)
        let reload = try await CommandResult.run(
            BuiltProducts.path(of: "geoattrctl"), ["reload", "--state-dir", daemon.stateDirectory, "--timeout", "20"])
        #expect(reload.status == 0, "\(reload.stderr)")
        let moved = try await client.refresh(wait: .seconds(10))
        #expect(moved.text.contains("geo.location.lat"), "\(moved.text)")
        #expect(!moved.text.contains("geo.country.iso_code"), "a place from an index cut short: \(moved.text)")
        let failed = try await daemon.waitForStatus("the index out of service, its file refused") {
            $0.indexVersion == nil && $0.indexProblem != nil
        }
        #expect(failed.indexProblem?.contains("truncated") == true, "\(String(describing: failed.indexProblem))")
        #expect(await daemon.waitForLog("geocoder index changed while in service") != nil, "\(daemon.log.text)")
        #expect(daemon.count("geocoder index changed while in service") == 1, "\(daemon.log.text)")
        #expect(try await client.attributes().attributes.keys.sorted() == ["geo.location.lat", "geo.location.lon"])

        // The copy finishes (written whole, closed): the reloader takes the file, and the next fix
        // is geocoded again.
        try Fixture.writeBytes(whole, to: index)
        let back = try await daemon.waitForStatus("the whole file in service again") {
            $0.indexVersion == version && $0.indexProblem == nil
        }
        #expect(back.indexVersion == version)
        let again = try await client.refresh(wait: .seconds(10))
        #expect(again.text.contains("\"geo.country.iso_code\":\"BB\""), "\(again.text)")
        #expect(await daemon.stop() == 0, "\(daemon.log.text)")
    }

    @Test("without an index the daemon serves coordinates alone and says so")
    func degradedWithoutIndex() async throws {
        let daemon = try DaemonProcess(config: "gpsd:\n  enabled: false\nstatic:\n  latitude: 1.5\n  longitude: 1.0\n")
        try await daemon.waitForGeneration()
        let client = GeoAttrClient(socketPath: daemon.socketPath)
        let document = try await client.attributes()
        #expect(document.attributes.keys.sorted() == ["geo.location.lat", "geo.location.lon"])
        #expect(try await client.status().text.contains("no geocoder index"))
        let refused = try await daemon.waitForStatus("the missing index refused") { $0.indexProblem != nil }
        #expect(refused.indexVersion == nil, "an index in service: \(String(describing: refused.indexVersion))")
        #expect(await daemon.stop() == 0)
    }

    @Test("the daemon at level exact and lookup --batch give the same place attributes for a point", arguments: [
        (1.5, 1.0, "AA"), (1.5, 3.0, "BB"), (0.2, 0.2, "AA"), (50.0, 50.0, nil),
    ] as [(Double, Double, String?)])
    func daemonAndLookupAgree(latitude: Double, longitude: Double, country: String?) async throws {
        let fixture = try Fixture.build(postal: true)
        let directory = try TemporaryDirectory(prefix: "geoattrd")
        let daemon = try DaemonProcess(
            config: "gpsd:\n  enabled: false\nstatic:\n  latitude: \(latitude)\n  longitude: \(longitude)\n",
            arguments: ["--index", fixture.index], directory: directory)
        try await daemon.waitForGeneration()
        let served = try await GeoAttrClient(socketPath: daemon.socketPath).attributes().attributes
        #expect(await daemon.stop() == 0)

        let input = try directory.write("\(latitude),\(longitude)\n", to: "points.csv")
        let lookup = try ChildProcess(
            executable: BuiltProducts.path(of: "geoattrctl"), arguments: ["lookup", "--batch", "--index", fixture.index],
            stdoutPath: directory.file("out"), stdinPath: input)
        #expect(await lookup.waitAsync(timeout: .seconds(20)) == 0)
        let output = try String(contentsOfFile: directory.file("out"), encoding: .utf8)
        let line = try #require(JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any], "\(output)")
        let looked = line.compactMapValues { $0 as? String }.filter { $0.key.hasPrefix("geo.") }
        let servedPlace = served.filter { $0.key.hasPrefix("geo.") && !$0.key.hasPrefix("geo.location.") }.mapValues(\.description)
        #expect(looked == servedPlace)
        // Inside the fixture's countries, both name the country: the comparison is not between two empty sets.
        #expect(servedPlace["geo.country.iso_code"] == country, "\(servedPlace)")
        #expect(servedPlace.keys.allSatisfy { key in PlaceAttribute.allCases.contains { $0.name == key } })
    }
}
