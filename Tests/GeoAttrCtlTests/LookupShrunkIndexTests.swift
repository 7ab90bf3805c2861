import Foundation
import Testing
import TestSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// `geoattrctl lookup --batch` whose index is cut short in place between two lines (the first
/// moment of a copy over it): no SIGBUS, the message, and no answer read from the short file.
@Suite("geoattrctl lookup, index cut short")
struct LookupShrunkIndexTests {
    @Test("lookup --batch with its index cut short between two lines: the message, exit 1, the first answer only")
    func batchIndexCutShort() async throws {
        let directory = try TemporaryDirectory(prefix: "geoattrctl")
        let index = directory.file("area.gidx")
        try FileManager.default.copyItem(atPath: try Fixture.build().index, toPath: index)
        // The points come through a FIFO, a line at a time. Held open read-write here, so that
        // neither end's open waits for the other; the child has only its read end.
        let points = directory.file("points")
        #expect(mkfifo(points, 0o600) == 0)
        let writer = open(points, O_RDWR | O_CLOEXEC)
        try #require(writer >= 0, "open \(points): errno \(errno)")
        let lookup = try ChildProcess(
            executable: FixCommandTests.geoattrctl, arguments: ["lookup", "--batch", "--jobs", "1", "--index", index],
            stdoutPath: directory.file("out"), stderrPath: directory.file("err"), stdinPath: points)
        func send(_ line: String) -> Bool { line.withCString { write(writer, $0, strlen($0)) } == line.utf8.count }
        func read(_ name: String) -> String { (try? String(contentsOfFile: directory.file(name), encoding: .utf8)) ?? "" }

        #expect(send("1.5,1.0\n"))
        // The first answer is written as soon as no more input is ready.
        #expect(await eventually(timeout: .seconds(20 * TestTiming.scale)) { read("out").hasSuffix("\n") }, "\(read("err"))")
        #expect(truncate(index, 4096) == 0)
        #expect(send("1.0,3.0\n"))
        close(writer)

        let status = await lookup.waitAsync(timeout: .seconds(20 * TestTiming.scale))
        #expect(status == 1, "exit \(String(describing: status)) (\(128 + SIGBUS) is SIGBUS): \(read("err"))")
        #expect(read("err").contains("changed while it was open"), "\(read("err"))")
        let answers = read("out").split(separator: "\n")
        #expect(answers.count == 1, "\(answers)")
        #expect(answers.first?.contains("\"geo.country.iso_code\":\"AA\"") == true, "\(answers)")
    }
}
