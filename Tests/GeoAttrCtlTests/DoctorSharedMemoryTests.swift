import Foundation
import Testing
import TestSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// `geoattrctl doctor` and gpsd's System V shared memory, which gpsd's guard does not close.
@Suite("geoattrctl doctor, gpsd's shared memory")
struct DoctorSharedMemoryTests {
    /// A stand-in for a gpsd built with another key: a process named gpsd (prctl) that makes one
    /// segment every user can read and one only it can, then waits for SIGTERM (the test's, at its
    /// end, however long the machine makes it) and removes both.
    static let standIn = """
        import ctypes, signal, sys, time
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(15, b"gpsd", 0, 0, 0)
        key = int(sys.argv[1])
        ids = [libc.shmget(key, 4096, 0o1000 | 0o2000 | 0o666), libc.shmget(key + 1, 4096, 0o1000 | 0o2000 | 0o600)]
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
        try:
            print(" ".join(map(str, ids)), flush=True)
            while True:
                time.sleep(3600)
        finally:
            for shmid in ids:
                if shmid >= 0:
                    libc.shmctl(shmid, 0, None)
        """

    @Test("a segment a gpsd made readable by every local user is a warning naming it, found by its creator")
    func readableSegmentByCreator() async throws {
        let directory = try TemporaryDirectory(prefix: "geoattrctl-shm")
        let script = try directory.write(Self.standIn, to: "gpsd.py")
        let key = 0x5445_0000 + Int32(getpid() & 0xFFFF) * 2
        let standIn = try ChildProcess(
            executable: "python3", arguments: [script, "\(key)"], stdoutPath: directory.file("ids"), stderrPath: directory.file("err"))
        defer { standIn.terminate() }
        func read(_ name: String) -> String { (try? String(contentsOfFile: directory.file(name), encoding: .utf8)) ?? "" }
        #expect(await eventually(timeout: .seconds(20 * TestTiming.scale)) { read("ids").hasSuffix("\n") }, "\(read("err"))")
        let ids = read("ids").split(whereSeparator: \.isWhitespace).compactMap { Int32($0) }
        try #require(ids.count == 2 && ids.allSatisfy { $0 >= 0 }, "the stand-in made no segments: \(read("ids")) \(read("err"))")

        let doctor = try await CommandResult.run(FixCommandTests.geoattrctl, ["doctor", "--gpsd", "127.0.0.1:1", "--timeout", "1"])
        let hex = "0x" + String(UInt32(bitPattern: key), radix: 16)
        let lines = doctor.stdout.split(separator: "\n").filter { $0.contains("shared memory") }
        #expect(
            lines.contains { $0.hasPrefix("[warn] gpsd access: gpsd's shared memory is readable by every local user (") && $0.contains("key \(hex) mode 666") },
            "\(doctor.stdout)")
        // The segment only its creator reads is not one of them.
        let privateHex = "0x" + String(UInt32(bitPattern: key + 1), radix: 16)
        #expect(!doctor.stdout.contains(privateHex), "\(doctor.stdout)")
        #expect(doctor.stdout.contains("PrivateIPC=yes"), "\(doctor.stdout)")
    }
}
