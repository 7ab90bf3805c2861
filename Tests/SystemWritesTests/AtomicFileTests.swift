import Foundation
import SystemWrites
import Testing
import TestSupport

/// Replacing a file in a directory someone else may write to: nothing planted there is written
/// through or followed.
@Suite("Atomic file replacement")
struct AtomicFileTests {
    @Test func aWriteNeverGoesThroughALinkPlantedAtTheOldTemporaryName() throws {
        let directory = try TemporaryDirectory(prefix: "atomicfile")
        let victim = try directory.write("precious", to: "victim")
        #expect(chmod(victim, 0o600) == 0)
        let target = directory.file("out.env")
        // The names an older writer used, and a spread of guesses at the current scheme's.
        #expect(symlink(victim, "\(target).tmp-\(getpid())") == 0)
        try AtomicFile.replace(target, with: Array("new\n".utf8), mode: 0o644)
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "precious")
        var status = stat()
        #expect(stat(victim, &status) == 0)
        #expect(status.st_mode & 0o777 == 0o600)
        #expect(try String(contentsOfFile: target, encoding: .utf8) == "new\n")
        #expect(lstat(target, &status) == 0)
        #expect(status.st_mode & S_IFMT == S_IFREG)
        #expect(status.st_mode & 0o777 == 0o644)
    }

    @Test func aLinkAtTheFinalNameIsReplacedNotFollowed() throws {
        let directory = try TemporaryDirectory(prefix: "atomicfile")
        let victim = try directory.write("precious", to: "victim")
        let target = directory.file("cache.json")
        #expect(symlink(victim, target) == 0)
        try AtomicFile.replace(target, with: Array("{}".utf8))
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "precious")
        var status = stat()
        #expect(lstat(target, &status) == 0)
        #expect(status.st_mode & S_IFMT == S_IFREG)
    }

    @Test func aDirectoryThatIsALinkIsRefused() throws {
        let directory = try TemporaryDirectory(prefix: "atomicfile")
        let real = directory.file("real")
        #expect(mkdir(real, 0o700) == 0)
        #expect(symlink(real, directory.file("link")) == 0)
        #expect(throws: AtomicFile.Failure.self) {
            try AtomicFile.replace(directory.file("link/out"), with: Array("x".utf8))
        }
        #expect(access("\(real)/out", F_OK) != 0)
    }
}
