import Foundation
import GeoAttrClient
import GeoAttrModel
import GeoIndex
import Testing
import TestSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Broken geocoder indexes (small fixture indexes, damaged on purpose): at start the daemon
/// serves the location without a place and says why; swapped in while running, each is refused
/// and the index in service stays, with nothing of the refused file left mapped.
@Suite("fault: index", .serialized)
struct IndexFaultTests {
    /// Inside the fixture's country AA, region AA-N, at Bigcity.
    static let config = "gpsd:\n  enabled: false\nstatic:\n  latitude: 1.5\n  longitude: 1.0\n  error_m: 25\n"

    /// A way to damage an index, and what the refusal must say.
    enum Damage: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case truncatedToHalf, truncatedOneByteShort, truncatedInsideHeader, empty
        case headerBitFlip, directoryBitFlip, wrongVersion, notAnIndex

        var testDescription: String { rawValue }

        func apply(to original: [UInt8]) -> [UInt8] {
            var bytes = original
            switch self {
            case .truncatedToHalf: bytes.removeLast(bytes.count / 2)
            case .truncatedOneByteShort: bytes.removeLast()
            case .truncatedInsideHeader: bytes = Array(bytes.prefix(40))
            case .empty: bytes = []
            case .headerBitFlip: bytes[IndexFormat.Header.contentChecksum + 3] ^= 0x10
            case .directoryBitFlip: bytes[IndexFormat.headerSize + 9] ^= 0x01
            case .wrongVersion: bytes[IndexFormat.Header.version] = UInt8(truncatingIfNeeded: IndexFormat.version + 1)
            case .notAnIndex: bytes = Array(String(repeating: "{\"not\": \"an index\"}\n", count: 20).utf8)
            }
            return bytes
        }

        /// Words the daemon's explanation must contain.
        var explanation: String {
            switch self {
            case .truncatedToHalf, .truncatedOneByteShort, .truncatedInsideHeader, .empty: "is truncated"
            case .headerBitFlip, .directoryBitFlip: "header checksum mismatch"
            case .wrongVersion: "has format version \(IndexFormat.version + 1)"
            case .notAnIndex: "is not a geoattrd geo index"
            }
        }
    }

    @Test("a broken index at start: the location is served without a place, and the log says why", arguments: Damage.allCases)
    func brokenIndexAtStart(damage: Damage) async throws {
        let directory = try TemporaryDirectory(prefix: "fault-index")
        let index = directory.file("area.gidx")
        try Fixture.writeBytes(damage.apply(to: try Fixture.readBytes(try FixtureIndex.withoutPostal.get())), to: index)
        let fault = try await FaultDaemon.start(config: Self.config, arguments: ["--index", index], directory: directory)
        let daemon = fault.daemon
        let refused = try #require(await daemon.waitForLog("geocoder index refused"), "\(daemon.log.text)")
        #expect(refused.text.contains("serving location attributes only"), "\(refused.text)")
        #expect(refused.text.contains(damage.explanation), "\(damage): \(refused.text)")
        #expect(refused.text.contains(" error "), "not logged as an error: \(refused.text)")
        let document = try #require(await fault.served())
        #expect(document.attributes.keys.sorted() == ["geo.location.lat", "geo.location.lon"], "\(document.attributes)")
        let status = try await fault.client.status().text
        #expect(status.contains("no geocoder index"), "\(status)")
        #expect(!status.contains("\"index_version\""), "\(status)")
        let problem = Self.indexProblem(in: status)
        #expect(problem?.hasPrefix(index + ": ") == true && problem?.contains(damage.explanation) == true, "\(damage): \(status)")
        // Nothing of the refused file stays mapped.
        #expect(IndexMappings.of(daemon.process.pid, under: directory.path).isEmpty)
        await fault.expectSurvived()
        await fault.stop()
    }

    @Test("broken replacements swapped in while running: each refused with its reason, the index in service stays, a good one still swaps in")
    func brokenReplacementsRefused() async throws {
        let withPostal = try FixtureIndex.withPostal.get()
        let directory = try TemporaryDirectory(prefix: "fault-index-swap")
        let index = directory.file("area.gidx")
        try FileManager.default.copyItem(atPath: try FixtureIndex.withoutPostal.get(), toPath: index)
        var fault = try await FaultDaemon.start(config: Self.config, arguments: ["--index", index], directory: directory)
        let daemon = fault.daemon
        let first = try #require(await fault.served())
        #expect(first.attributes["geo.country.iso_code"] == .string("AA"))
        let version = try #require(first.indexVersion)
        let mappedBefore = IndexMappings.of(daemon.process.pid, under: directory.path)
        #expect(mappedBefore.count >= 1, "the index in service is not mapped")

        let original = try Fixture.readBytes(withPostal)
        for damage in Damage.allCases {
            let mark = daemon.log.all.count
            try Fixture.writeBytes(damage.apply(to: original), to: directory.file("area.gidx.new"))
            #expect(rename(directory.file("area.gidx.new"), index) == 0)
            let refused = try #require(await daemon.waitForLog("geocoder index refused", from: mark), "\(damage): \(daemon.log.text.suffix(2000))")
            #expect(refused.text.contains("the previous index stays in service"), "\(damage): \(refused.text)")
            #expect(refused.text.contains(damage.explanation), "\(damage): \(refused.text)")
            let status = try await fault.client.status().text
            #expect(status.contains("\"index_version\":\"\(version)\""), "\(damage): \(status)")
            #expect(!status.contains("no geocoder index"), "\(damage): \(status)")
            #expect(Self.indexProblem(in: status)?.contains(damage.explanation) == true, "\(damage): \(status)")
            // The refused file was unmapped; the one in service (renamed over, so deleted) stays mapped.
            #expect(IndexMappings.of(daemon.process.pid, under: directory.path).count == mappedBefore.count,
                    "\(damage): \(IndexMappings.of(daemon.process.pid, under: directory.path))")
            let served = try #require(await fault.served())
            #expect(served.attributes["geo.country.iso_code"] == .string("AA"), "\(damage): \(served.attributes)")
        }
        #expect(daemon.count("geocoder index in service") == 1, "a broken index was swapped in")
        await fault.expectSurvived()

        // The watcher survived the refusals: a good replacement is swapped in and geocodes.
        try FileManager.default.copyItem(atPath: withPostal, toPath: directory.file("area.gidx.new"))
        #expect(rename(directory.file("area.gidx.new"), index) == 0)
        // Another file than the one in service (its size is in the version), taken without a problem.
        try await daemon.waitForStatus("an index other than \(version) in service") {
            $0.indexVersion != nil && $0.indexVersion != version && $0.indexProblem == nil
        }
        let refreshed = try await fault.client.refresh(wait: .seconds(10))
        #expect(refreshed.text.contains("\"geo.postal_code\":\"A-100\""), "\(refreshed.text)")
        let statusAfter = try await fault.client.status().text
        #expect(Self.indexProblem(in: statusAfter) == nil, "the refusal outlived a good index: \(statusAfter)")
        await fault.rememberServed()
        await fault.expectSurvived()
        await fault.stop()
    }

    @Test("index content bit-flipped (not checked at open, by design): lookups stay bounds-checked, the daemon serves on")
    func contentBitFlipsServedSafely() async throws {
        let original = try Fixture.readBytes(try FixtureIndex.withPostal.get())
        let count = UInt32(original[IndexFormat.Header.sectionCount]) | UInt32(original[IndexFormat.Header.sectionCount + 1]) << 8
        let contentStart = IndexFormat.headerSize + Int(count) * IndexFormat.directoryEntrySize
        var generator = SystemRandomNumberGenerator()
        for round in 0..<6 {
            var bytes = original
            for _ in 0..<(1 + round * 4) {
                let position = Int.random(in: contentStart..<bytes.count, using: &generator)
                bytes[position] ^= UInt8.random(in: 1...255, using: &generator)
            }
            let directory = try TemporaryDirectory(prefix: "fault-index-flip")
            let index = directory.file("area.gidx")
            try Fixture.writeBytes(bytes, to: index)
            // A fresh start, so the first fix is looked up in the damaged index.
            let fault = try await FaultDaemon.start(config: Self.config, arguments: ["--index", index], directory: directory)
            // In service, or refused by the section checks made at open: either way, said once.
            let verdicts = fault.daemon.count("geocoder index in service") + fault.daemon.count("geocoder index refused")
            #expect(verdicts == 1, "round \(round): \(fault.daemon.log.text)")
            let document = try #require(await fault.served(), "round \(round)")
            #expect(document.attributes["geo.location.lat"] == .double(1.5))
            await fault.expectSurvived()
            await fault.stop()
        }
    }
}

/// The fixture indexes, built once for the whole fault suite (each build writes its sources and
/// the index into a directory of its own).
enum FixtureIndex {
    static let withoutPostal = Result { try Fixture.build(postal: false).index }
    static let withPostal = Result { try Fixture.build(postal: true).index }
}

/// The daemon's memory mappings of index files.
enum IndexMappings {
    /// Lines of /proc/PID/maps that map a file under `directory`. (Read to the end: Foundation's
    /// String(contentsOfFile:) stops after the first 4 KiB of a /proc file.)
    static func of(_ pid: pid_t, under directory: String) -> [String] {
        guard let maps = try? Fixture.readBytes("/proc/\(pid)/maps") else { return [] }
        return String(decoding: maps, as: UTF8.self).split(separator: "\n").map(String.init).filter { $0.contains(directory) }
    }
}

extension IndexFaultTests {
    /// `index_problem` of a `GET /v1/status` document, `nil` when absent.
    static func indexProblem(in status: String) -> String? {
        let document = try? JSONSerialization.jsonObject(with: Data(status.utf8)) as? [String: Any]
        return document?["index_problem"] as? String
    }
}
