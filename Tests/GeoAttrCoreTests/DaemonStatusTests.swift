import GeoAttrCore
import GeoAttrModel
import Testing

/// The status's index fields come from the index's one state, and each part of the status has
/// its own writer: one part's writer leaves the others as they were.
@Suite("Daemon status")
struct DaemonStatusTests {
    static let noIndex = ["no geocoder index: serving location attributes only"]
    static let refusal = IndexRefusal(path: "/usr/share/geoattrd/world.gidx", reason: "is truncated")

    @Test("no index in service: degraded, whether none was tried yet or the only file was refused")
    func degradedWithoutAnIndex() {
        #expect(IndexState.notLoaded.degradedReasons == Self.noIndex)
        #expect(IndexState.refused(Self.refusal, keeping: nil).degradedReasons == Self.noIndex)
        #expect(IndexState.refused(Self.refusal, keeping: nil).versionInService == nil)
    }

    @Test("an index in service: not degraded; a refused newer file stays reported until a load succeeds")
    func inServiceAndRefused() {
        let keeping = IndexState.refused(Self.refusal, keeping: "v1")
        #expect(keeping.degradedReasons.isEmpty)
        #expect(keeping.versionInService == "v1")
        #expect(keeping.refusal?.description == "/usr/share/geoattrd/world.gidx: is truncated")
        let loaded = IndexState.loaded(version: "v2")
        #expect(loaded.degradedReasons.isEmpty && loaded.refusal == nil && loaded.versionInService == "v2")
    }

    @Test("each writer changes its part alone")
    func writersKeepToTheirParts() {
        let store = AttributeStore(powerState: .foreground)
        #expect(store.status.degraded == Self.noIndex)
        store.publishIndexState(.refused(Self.refusal, keeping: nil))
        store.publishReloadRefusal("index.path: not absolute")
        store.updateSchedulerStatus { $0.refreshesAccepted = 3 }
        var status = store.status
        #expect(status.index == .refused(Self.refusal, keeping: nil))
        #expect(status.reloadRefused == "index.path: not absolute")
        #expect(status.scheduler.refreshesAccepted == 3)
        store.publishIndexState(.loaded(version: "v1"))
        store.publishReloadRefusal(nil)
        status = store.status
        #expect(status.degraded.isEmpty && status.index.refusal == nil && status.reloadRefused == nil)
        #expect(status.scheduler.refreshesAccepted == 3)
        #expect(store.reader.status == status)
    }
}
