import Foundation
import GeoAttrLinux
import Testing
import TestSupport

/// What the index reloader compares when its watch starts: the same file, untouched, is the same
/// identity; a file replaced by rename, rewritten in place or removed is not.
@Suite("FileIdentity")
struct FileIdentityTests {
    @Test func untouchedIsTheSameAndEveryChangeIsNot() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.write("v1", to: "world.idx")
        let first = try #require(FileIdentity.of(path))
        #expect(FileIdentity.of(path) == first)

        // Replaced by rename with the same content and size: another inode.
        try "v1".write(toFile: directory.file("world.idx.new"), atomically: false, encoding: .utf8)
        #expect(rename(directory.file("world.idx.new"), path) == 0)
        let replaced = try #require(FileIdentity.of(path))
        #expect(replaced != first)

        // Rewritten in place to another length: same inode, another size.
        try "version 2".write(toFile: path, atomically: false, encoding: .utf8)
        #expect(FileIdentity.of(path) != replaced)

        try FileManager.default.removeItem(atPath: path)
        #expect(FileIdentity.of(path) == nil)
    }
}
