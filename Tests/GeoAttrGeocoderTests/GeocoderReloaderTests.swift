import GeoPlaces
import Foundation
import GeoAttrCore
import GeoAttrGeocoder
import GeoAttrModel
import Logging
import Synchronization
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

    @Test("a replaced index is swapped in; an invalid one is refused and the old one stays, and each state is published")
    func swapsAndRefuses() async throws {
        let directory = try TemporaryDirectory()
        let path = try directory.write("v1", to: "world.idx")
        let slot = GeocoderSlot()
        let (watching, ready) = AsyncStream.makeStream(of: Void.self)
        let (states, published) = AsyncStream.makeStream(of: IndexState.self)
        let reloader = GeocoderReloader(
            path: path, slot: slot, logger: Logger(label: "test"), onWatching: { ready.yield() },
            publish: { published.yield($0) }, load: Self.load)
        var state = states.makeAsyncIterator()
        #expect(await reloader.reload(reason: "start"))
        #expect(slot.geocoder?.indexVersion == "v1")
        #expect(await state.next() == .loaded(version: "v1"))
        let task = Task { await reloader.run() }
        var iterator = watching.makeAsyncIterator()
        _ = await iterator.next()

        // Replaced atomically, the way an upgrade installs it.
        try "v2".write(toFile: directory.file("world.idx.new"), atomically: false, encoding: .utf8)
        #expect(rename(directory.file("world.idx.new"), path) == 0)
        #expect(await eventually { slot.geocoder?.indexVersion == "v2" })

        try "corrupt".write(toFile: directory.file("world.idx.new"), atomically: false, encoding: .utf8)
        #expect(rename(directory.file("world.idx.new"), path) == 0)
        // A replacement may raise more than one event, so more than one load.
        var refused: IndexState?
        while refused == nil, let next = await state.next() {
            if next.refusal != nil { refused = next }
        }
        #expect(refused?.refusal?.path == path)
        #expect(refused?.refusal?.description.hasPrefix(path + ": ") == true)
        #expect(refused?.versionInService == "v2")
        #expect(refused?.degradedReasons == [])
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
            }, publish: { _ in }, load: Self.load)
        #expect(await reloader.reload(reason: "start"))
        #expect(slot.geocoder?.indexVersion == "v1")
        let task = Task { await reloader.run() }
        #expect(await eventually { slot.geocoder?.indexVersion == "v2" })
        task.cancel()
        await task.value
    }

    @Test func aMissingIndexLeavesTheDaemonDegradedNotDown() async throws {
        let slot = GeocoderSlot()
        let published = Mutex<[IndexState]>([])
        let reloader = GeocoderReloader(
            path: "/nonexistent/world.idx", slot: slot, logger: Logger(label: "test"),
            publish: { state in published.withLock { $0.append(state) } }, load: Self.load)
        #expect(!(await reloader.reload(reason: "start")))
        #expect(slot.geocoder == nil)
        let state = try #require(published.withLock { $0.first })
        #expect(state.refusal?.path == "/nonexistent/world.idx")
        #expect(state.versionInService == nil)
        #expect(state.degradedReasons == ["no geocoder index: serving location attributes only"])
    }
}
