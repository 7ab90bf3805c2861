import GeoPlaces
import Foundation
import GeoAttrCore
import GeoAttrLinux
import GeoAttrModel
import Testing
import TestSupport

@Suite("CacheFile")
struct CacheFileTests {
    @Test func roundTripsAndLeavesNoTemporaryFile() throws {
        let directory = try TemporaryDirectory()
        let cache = CacheFile(directory: directory.path)
        #expect(try cache.load() == nil)
        try cache.save(LocationResult.sample())
        #expect(try cache.load() == LocationResult.sample())
        try cache.save(LocationResult.sample(generation: 43))
        #expect(try cache.load()?.generation == 43)
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(names == ["cache.json"])
        let text = try String(contentsOfFile: cache.path, encoding: .utf8)
        #expect(text.contains("\"schema\":1"))
        #expect(text.contains("\"updated_at\":\"2026-11-18T11:06:42Z\""))
    }

    @Test("a generation beyond the clock plus a day is implausible: the file is set aside", arguments: [UInt64.max, UInt64.max / 2])
    func implausibleGenerationIsSetAside(generation: UInt64) throws {
        let directory = try TemporaryDirectory()
        let cache = CacheFile(directory: directory.path)
        try cache.save(LocationResult.sample(generation: generation))
        #expect {
            _ = try cache.load()
        } throws: { error in
            guard case .corrupt(_, let reason) = error as? CacheFileError else { return false }
            return reason.contains("beyond the clock plus a day") && reason.contains("moved to")
        }
        #expect(FileManager.default.fileExists(atPath: cache.setAsidePath))
        // Today's clock in milliseconds is plausible.
        let now = UInt64(Date().timeIntervalSince1970 * 1000)
        try cache.save(LocationResult.sample(generation: now))
        #expect(try cache.load()?.generation == now)
    }

    @Test("a corrupt file is set aside with a clear error, and the next write starts clean", arguments: [
        "", "{", "not json at all", "{\"schema\":1}", "{\"schema\":99,\"result\":{}}", String(repeating: "x", count: 70_000),
    ])
    func corruptFileIsSetAside(content: String) throws {
        let directory = try TemporaryDirectory()
        let cache = CacheFile(directory: directory.path)
        try content.write(toFile: cache.path, atomically: true, encoding: .utf8)
        expectSetAside(cache)
        #expect(!FileManager.default.fileExists(atPath: cache.path))
        try cache.save(LocationResult.sample())
        #expect(try cache.load() == LocationResult.sample())
    }

    @Test func anImplausiblePositionIsCorrupt() throws {
        let directory = try TemporaryDirectory()
        let cache = CacheFile(directory: directory.path)
        var bad = LocationResult.sample()
        bad.fix.latitude = 0
        bad.fix.longitude = 0
        try cache.save(bad)
        #expect(throws: CacheFileError.self) { try cache.load() }
    }

    @Test func truncatedAtEveryOffsetIsNeverAcceptedAsAnotherResult() throws {
        let directory = try TemporaryDirectory()
        let cache = CacheFile(directory: directory.path)
        try cache.save(LocationResult.sample())
        let full = try Data(contentsOf: URL(fileURLWithPath: cache.path))
        for length in 0..<full.count {
            try full.prefix(length).write(to: URL(fileURLWithPath: cache.path))
            let loaded = try? cache.load()
            #expect(loaded == nil || loaded == LocationResult.sample(), "prefix of \(length) bytes gave \(String(describing: loaded))")
        }
    }

    @Test func anUnwritableDirectoryIsATypedError() throws {
        let cache = CacheFile(directory: "/nonexistent-geoattrd-test/state")
        #expect {
            try cache.save(LocationResult.sample())
        } throws: { error in
            guard case .unwritable(_, let reason) = error as? CacheFileError else { return false }
            return reason.contains("No such file")
        }
    }
}

/// Loading `cache` fails as corrupt, and the file has been set aside for an operator to read.
func expectSetAside(_ cache: CacheFile, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(sourceLocation: sourceLocation) {
        _ = try cache.load()
    } throws: { error in
        guard case .corrupt(_, let reason) = error as? CacheFileError else { return false }
        return reason.contains("moved to")
    }
    #expect(FileManager.default.fileExists(atPath: cache.setAsidePath), sourceLocation: sourceLocation)
}
