import Foundation
import GeoAttrModel
import Testing
import TestSupport

#if canImport(Glibc)
import Glibc
#endif

/// The tools in a tree without /proc, as in an image being built in a chroot: they read their
/// arguments from what glibc passed them, not through /proc, and geoattrctl's commands that need
/// neither the daemon nor gpsd run without Swift concurrency, whose Dispatch worker pool reads
/// /proc (ProgramEntry).
@Suite("Without /proc", .enabled(if: getuid() == 0, "mounting over /proc in a namespace of its own needs root"))
struct WithoutProcTests {
    /// `executable arguments` in a mount namespace of its own where /proc is an empty tmpfs (and the
    /// command fails if /proc/self can still be read).
    static func runWithoutProc(_ executable: String, _ arguments: [String]) async throws -> CommandResult {
        let hideProc = #"mount -t tmpfs none /proc && ! test -e /proc/self && exec "$0" "$@""#
        return try await CommandResult.run(
            "/usr/bin/unshare", ["--mount", "--propagation", "private", "--", "/bin/sh", "-c", hideProc, executable] + arguments,
            timeout: .seconds(30))
    }

    @Test("geoattrctl lookup answers the coordinates it was given, not the top-level help")
    func lookupWithoutProc() async throws {
        let fixture = try Fixture.build()
        let result = try await Self.runWithoutProc(FixCommandTests.geoattrctl, ["lookup", "1.5,1.0", "--index", fixture.index])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(result.stdout.contains(#""geo.country.iso_code":"AA""#), "stdout: \(result.stdout)")
    }

    @Test("geoattrd reads its arguments: --version prints the version, an unknown option is a usage error; no daemon starts")
    func geoattrdArgumentsWithoutProc() async throws {
        let version = try await Self.runWithoutProc(BuiltProducts.path(of: "geoattrd"), ["--version"])
        #expect(version.status == 0, "stderr: \(version.stderr)")
        #expect(version.stdout.hasPrefix(ProductVersion.number + " "), "stdout: \(version.stdout)")
        let unknown = try await Self.runWithoutProc(BuiltProducts.path(of: "geoattrd"), ["--no-such-option"])
        #expect(unknown.status == 64, "stderr: \(unknown.stderr)")
        #expect(unknown.stderr.contains("--no-such-option"), "stderr: \(unknown.stderr)")
    }

    @Test("a tool started with no arguments at all, not even its name, says so and exits 70", arguments: ["geoattrctl", "geoattrd"])
    func emptyArgumentVector(tool: String) async throws {
        let directory = try TemporaryDirectory(prefix: "noargv")
        let stderrPath = directory.file("stderr")
        let path = BuiltProducts.path(of: tool)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, stderrPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        // An empty argument vector: the kernel passes argc 0, or (Linux 5.18 and later) one empty
        // string in its place.
        var argv: [UnsafeMutablePointer<CChar>?] = [nil]
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, path, &actions, nil, &argv, environ)
        try #require(spawned == 0, "posix_spawn: \(String(cString: strerror(spawned)))")
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1, errno == EINTR {}
        let stderr = (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? ""
        #expect(status & 0x7f == 0, "killed by signal \(status & 0x7f)")
        #expect((status >> 8) & 0xff == 70, "stderr: \(stderr)")
        #expect(stderr.contains("\(tool): no command-line arguments reached the program"), "stderr: \(stderr)")
    }
}
