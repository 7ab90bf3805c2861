import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A real child process, started in its own session so that its whole process group (gpsfake
/// and the gpsd it starts) can be signalled and reaped, even when a test fails.
public final class ChildProcess: Sendable {
    public struct SpawnError: Error, CustomStringConvertible {
        public var description: String
    }

    public let pid: pid_t
    private let exitStatus = Mutex<Int32?>(nil)

    /// glibc's POSIX_SPAWN_SETSID (not exported by the Glibc module).
    private static let spawnSetSID: Int16 = 0x80

    /// Starts `executable` with `arguments`. `stdoutPath` receives standard output; standard
    /// error goes to `stderrFD` when given (the caller keeps its copy), else to `stderrPath`. The
    /// environment is the test's, without the harness's own variables, unless one is given.
    public init(
        executable: String,
        arguments: [String],
        environment: [String: String] = BuiltProducts.childEnvironment(),
        stdoutPath: String = "/dev/null",
        stderrPath: String = "/dev/null",
        stderrFD: Int32? = nil,
        stdinPath: String = "/dev/null"
    ) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, stdinPath, O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, stdoutPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        if let stderrFD {
            posix_spawn_file_actions_adddup2(&actions, stderrFD, 2)
        } else {
            posix_spawn_file_actions_addopen(&actions, 2, stderrPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        }
        // The test runner's own descriptors (pipes, sockets, other tests' connections) must not
        // leak into the child: a leaked socket keeps a connection open after its owner closed it.
        for fd in Self.openDescriptors() where fd > 2 {
            posix_spawn_file_actions_addclose(&actions, fd)
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setflags(&attributes, Self.spawnSetSID)

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid = pid_t()
        let rc = posix_spawnp(&pid, executable, &actions, &attributes, argv, envp)
        guard rc == 0 else {
            throw SpawnError(description: "could not start \(executable): \(String(cString: strerror(rc)))")
        }
        self.pid = pid
    }

    /// This process's open descriptors, from /proc/self/fd.
    static func openDescriptors() -> [Int32] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") else { return [] }
        return names.compactMap { Int32($0) }.filter { fcntl($0, F_GETFD) >= 0 }
    }

    /// The exit status once the process has ended and was reaped (128 + N for signal N).
    public func reap() -> Int32? {
        exitStatus.withLock { status in
            if let status { return status }
            var raw: Int32 = 0
            let rc = waitpid(pid, &raw, WNOHANG)
            guard rc == pid else { return nil }
            let code = (raw & 0x7f) == 0 ? (raw >> 8) & 0xff : 128 + (raw & 0x7f)
            status = code
            return code
        }
    }

    public var isRunning: Bool { reap() == nil }

    /// Waits up to `timeout` for the process to end; its exit status, or `nil` if still running.
    @discardableResult
    public func wait(timeout: Duration) -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let status = reap() { return status }
            usleep(5_000)
        }
        return reap()
    }

    /// Like `wait(timeout:)`, but sleeps as a task instead of blocking a thread.
    @discardableResult
    public func waitAsync(timeout: Duration) async -> Int32? {
        _ = await eventually(timeout: timeout) { reap() != nil }
        return reap()
    }

    public func signal(_ signal: Int32) {
        if isRunning { kill(pid, signal) }
    }

    /// Signals the whole process group (the child leads its own session).
    public func signalGroup(_ signal: Int32) {
        kill(-pid, signal)
    }

    /// SIGTERM to the group, up to `grace` to exit, then SIGKILL to the group; always reaped.
    public func terminate(grace: Duration = .seconds(2)) {
        signalGroup(SIGTERM)
        if wait(timeout: grace) == nil {
            signalGroup(SIGKILL)
            wait(timeout: .seconds(5))
        }
        // gpsd may outlive gpsfake: make sure nothing of the group is left.
        signalGroup(SIGKILL)
    }

    deinit {
        if reap() == nil {
            kill(-pid, SIGKILL)
            var raw: Int32 = 0
            waitpid(pid, &raw, 0)
        } else {
            kill(-pid, SIGKILL)
        }
    }
}
