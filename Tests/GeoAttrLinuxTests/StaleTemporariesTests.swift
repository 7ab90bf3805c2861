@testable import GeoAttrLinux
import Foundation
import Testing
import TestSupport

/// Leftovers of writers that died go, and nothing planted among them is followed.
@Suite("Stale temporary files")
struct StaleTemporariesTests {
    @Test func leftoversOfDeadWritersAreRemovedWithoutFollowingThem() throws {
        let directory = try TemporaryDirectory(prefix: "stale")
        let victim = try directory.write("precious", to: "victim")
        let target = directory.file("cache.json")
        // A PID that cannot be running: above the kernel's maximum.
        let dead = "4194305"
        _ = try directory.write("half", to: "cache.json.tmp-\(dead)")
        _ = try directory.write("half", to: "cache.json.tmp-\(dead)-a1b2c3")
        #expect(symlink(victim, "\(target).tmp-\(dead)-ffff") == 0)
        // The running process's own is left alone.
        _ = try directory.write("mine", to: "cache.json.tmp-\(getpid())-1")
        let removed = StaleTemporaries.removeTemporaries(of: target)
        #expect(Set(removed.map { ($0 as NSString).lastPathComponent }) == [
            "cache.json.tmp-\(dead)", "cache.json.tmp-\(dead)-a1b2c3", "cache.json.tmp-\(dead)-ffff",
        ])
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "precious")
        #expect(access(directory.file("cache.json.tmp-\(getpid())-1"), F_OK) == 0)
    }
}
