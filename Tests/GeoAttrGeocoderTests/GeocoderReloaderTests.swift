import GeoPlaces
import Foundation
import GeoAttrCore
import GeoAttrGeocoder
import GeoAttrModel
import Logging
import Testing
import TestSupport

/// The swap mechanism against real files and inotify, with a stand-in index format (a file
/// holding a version string; "corrupt" fails validation): the seam the real index plugs into.
@Suite("GeocoderReloader")
struct GeocoderReloaderTests {
    struct VersionGeocoder: Geocoding {
        var indexVersion: String
        func place(latitude: Double, longitude: Double) -> GeoPlace { GeoPlace(countryCode: "XX") }
    }

    struct InvalidIndex: Error {}

    static let load: GeocoderReloader.Loader = { path in
        let text = try String(contentsOfFile: path, encoding: .utf8)
        guard !text.contains("corrupt") else { throw InvalidIndex() }
        return VersionGeocoder(indexVersion: text)
    }

    @Test("a replaced index is swapped in; an invalid one is refused and the old one stays")
    func swapsAndRefuses() async throws {
        let directory = try TemporaryDirectory()
        let path = try directory.write("v1", to: "world.idx")
        let slot = GeocoderSlot()
        let (watching, ready) = AsyncStream.makeStream(of: Void.self)
        let (refusals, refused) = AsyncStream.makeStream(of: String.self)
        let reloader = GeocoderReloader(
            path: path, slot: slot, logger: Logger(label: "test"), onWatching: { ready.yield() },
            onRefusal: { refused.yield($0) }, load: Self.load)
        #expect(await reloader.reload(reason: "start"))
        #expect(slot.geocoder?.indexVersion == "v1")
        let task = Task { await reloader.run() }
        var iterator = watching.makeAsyncIterator()
        _ = await iterator.next()

        // Replaced atomically, the way an upgrade installs it.
        try "v2".write(toFile: directory.file("world.idx.new"), atomically: false, encoding: .utf8)
        #expect(rename(directory.file("world.idx.new"), path) == 0)
        #expect(await eventually { slot.geocoder?.indexVersion == "v2" })

        try "corrupt".write(toFile: directory.file("world.idx.new"), atomically: false, encoding: .utf8)
        #expect(rename(directory.file("world.idx.new"), path) == 0)
        var refusal = refusals.makeAsyncIterator()
        #expect(await refusal.next()?.hasPrefix(path + ": ") == true)
        #expect(slot.geocoder?.indexVersion == "v2")
        #expect(!(await reloader.reload(reason: "SIGHUP")))
        #expect(slot.geocoder?.indexVersion == "v2")
        task.cancel()
        await task.value
    }

    @Test("an index replaced after the last load and before the watch is in place is swapped in, without another change")
    func replacedBeforeTheWatchIsSwappedIn() async throws {
        let directory = try TemporaryDirectory()
        let path = try directory.write("v1", to: "world.idx")
        let slot = GeocoderSlot()
        let reloader = GeocoderReloader(
            path: path, slot: slot, logger: Logger(label: "test"), onWatching: {},
            beforeWatch: {
                _ = try? "v2".write(toFile: directory.file("world.idx.new"), atomically: false, encoding: .utf8)
                _ = rename(directory.file("world.idx.new"), path)
            }, onSwap: { _ in }, onRefusal: { _ in }, load: Self.load)
        #expect(await reloader.reload(reason: "start"))
        #expect(slot.geocoder?.indexVersion == "v1")
        let task = Task { await reloader.run() }
        #expect(await eventually { slot.geocoder?.indexVersion == "v2" })
        task.cancel()
        await task.value
    }

    @Test func aMissingIndexLeavesTheDaemonDegradedNotDown() async throws {
        let slot = GeocoderSlot()
        let reloader = GeocoderReloader(path: "/nonexistent/world.idx", slot: slot, logger: Logger(label: "test"), load: Self.load)
        #expect(!(await reloader.reload(reason: "start")))
        #expect(slot.geocoder == nil)
    }
}
