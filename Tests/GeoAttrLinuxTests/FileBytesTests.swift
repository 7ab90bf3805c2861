@testable import GeoAttrLinux
import Foundation
import Testing
import TestSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Files in a directory someone else may write to: nothing planted there is followed or waited
/// on.
@Suite("Safe file reads")
struct FileBytesTests {
    @Test func readsRefuseLinksFIFOsAndDirectoriesAtOnce() throws {
        let directory = try TemporaryDirectory(prefix: "filebytes")
        let file = try directory.write("background\n", to: "state")
        #expect(symlink(file, directory.file("link")) == 0)
        #expect(mkfifo(directory.file("fifo"), 0o600) == 0)
        for (name, kind) in [("link", "a symbolic link"), ("fifo", "a FIFO"), ("", "a directory")] {
            let started = ContinuousClock.now
            #expect {
                _ = try FileBytes.read(name.isEmpty ? directory.path : directory.file(name), limit: 4096)
            } throws: { error in
                guard case FileBytes.ReadError.notRegular(let found) = error else { return false }
                return found == kind
            }
            // A FIFO with no writer would block a plain open for ever.
            #expect(ContinuousClock.now - started < .seconds(1))
        }
        #expect(try FileBytes.read(file, limit: 4096) == Array("background\n".utf8))
        #expect(try FileBytes.read(directory.file("absent"), limit: 4096) == nil)
    }
}
