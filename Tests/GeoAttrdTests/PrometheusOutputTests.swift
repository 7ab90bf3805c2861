import Foundation
import GeoAttrClient
import GeoAttrCore
import GeoAttrModel
import Testing
import TestSupport

/// The three Prometheus outputs of a running daemon, read by Prometheus's own checker.
@Suite("Prometheus outputs")
struct PrometheusOutputTests {
    /// `promtool check metrics` on `text`: its exit status and what it printed.
    static func promtool(_ text: String, in directory: TemporaryDirectory, name: String) async throws -> CommandResult {
        let path = try directory.write(text, to: name)
        return try await CommandResult.run("/bin/sh", ["-c", #"promtool check metrics < "$1" 2>&1"#, "sh", path])
    }

    /// Each family of a Prometheus text and its `# TYPE`.
    static func families(in text: String) -> [String: String] {
        var families: [String: String] = [:]
        for line in text.split(separator: "\n") where line.hasPrefix("# TYPE ") {
            let words = line.split(separator: " ")
            if words.count == 4 { families[String(words[2])] = String(words[3]) }
        }
        return families
    }

    @Test("/metrics, ?format=prometheus and the textfile pass promtool; every family has its help; coordinates are gauges of the location outputs only")
    func outputsPassPromtool() async throws {
        let directory = try TemporaryDirectory(prefix: "geoattrd")
        let textfile = directory.file("geo.prom")
        let daemon = try DaemonProcess(
            config: APIProcessTests.staticConfig + "outputs:\n  prometheus_file: \(textfile)\n  level: exact\n", directory: directory)
        try await daemon.waitForGeneration()
        let client = GeoAttrClient(socketPath: daemon.socketPath)
        let metrics = try await client.request("GET", "/metrics").text
        let location = try await client.attributes(format: .prometheus).text
        // By now every family has a series: requests were counted, a result is served and aged.
        let scrapedLater = try await client.request("GET", "/metrics").text
        #expect(await eventually { FileManager.default.fileExists(atPath: textfile) })
        let file = try String(contentsOfFile: textfile, encoding: .utf8)
        #expect(await daemon.stop() == 0)

        for (name, text) in [("metrics.txt", metrics), ("location.txt", location), ("geo.prom", file)] {
            let checked = try await Self.promtool(text, in: directory, name: name)
            #expect(checked.status == 0 && checked.stdout.isEmpty, "\(name): \(checked.stdout)\n\(text)")
        }
        // The catalogue's families and no other, each with its help text and type.
        let exposed = Self.families(in: scrapedLater)
        #expect(exposed.keys.sorted() == MetricCatalogue.all.map(\.name).sorted(), "\(scrapedLater)")
        for family in MetricCatalogue.all {
            #expect(exposed[family.name] == family.kind.rawValue, "\(family.name)")
            #expect(scrapedLater.contains("# HELP \(family.name) \(family.help)\n"), "\(family.name)")
        }
        // Every fix outcome at zero from the start.
        #expect(metrics.contains(#"geoattrd_fixes_total{outcome="timeout"} 0"#))
        #expect(metrics.contains(#"geoattrd_refresh_requests_total{decision="refused"} 0"#))
        #expect(metrics.contains(#"geoattrd_build_info{version=""#))
        #expect(!metrics.contains("latitude") && !metrics.contains("47.37"), "no location on /metrics")
        for text in [location, file] {
            #expect(text.contains("geoattrd_location_latitude_degrees 47.3769\n"))
            #expect(text.contains("geoattrd_location_longitude_degrees 8.5417\n"))
            #expect(text.contains("geoattrd_location_updated_timestamp_seconds "))
            #expect(!text.contains("geo_location_lat"), "coordinates are not labels")
            // When the text was written, not an age frozen at that moment.
            #expect(!text.contains("geoattrd_location_age_seconds"))
            let written = text.split(separator: "\n").first { $0.hasPrefix("geoattrd_location_written_timestamp_seconds ") }
            let seconds = written.flatMap { Int64($0.split(separator: " ").last ?? "") } ?? 0
            let now = Int64(Date().timeIntervalSince1970)
            #expect(seconds > now - 120 && seconds <= now, "\(written ?? "no written timestamp")")
        }
    }
}
