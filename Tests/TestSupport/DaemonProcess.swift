import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The real `geoattrd` binary, started in its own session with a private state directory, its
/// log recorded line by line.
public final class DaemonProcess: Sendable {
    public let process: ChildProcess
    public let log: LineRecorder
    public let directory: TemporaryDirectory

    public var stateDirectory: String { directory.file("state") }
    public var stateFile: String { directory.file("state-file") }
    public var configFile: String { directory.file("geoattrd.yaml") }
    public var cacheFile: String { "\(stateDirectory)/cache.json" }
    public var socketPath: String { directory.file("api.sock") }

    /// Starts geoattrd (through `launcher`, e.g. systemd-socket-activate, when given) with `--config`, `--state-dir`, `--state-file` and `--socket` in
    /// `directory`, plus `arguments`. `config` is written to the config file first. Unless
    /// `arguments` name one, `--index` points at a file that does not exist, so a world index
    /// the developer built does not change what the tests see. `executable` replaces the
    /// geoattrd built beside the tests (the fault suite runs the release build).
    public init(
        config: String = "",
        arguments: [String] = [],
        directory: TemporaryDirectory? = nil,
        environment: [String: String] = [:],
        launcher: [String] = [],
        executable: String? = nil
    ) throws {
        let directory = try directory ?? TemporaryDirectory(prefix: "geoattrd")
        try FileManager.default.createDirectory(atPath: directory.file("state"), withIntermediateDirectories: true)
        _ = try directory.write(config, to: "geoattrd.yaml")
        let env = BuiltProducts.childEnvironment(adding: environment)
        let log = try LineRecorder()
        let geoattrd = executable ?? BuiltProducts.path(of: "geoattrd")
        process = try ChildProcess(
            executable: launcher.first ?? geoattrd,
            arguments: Array(launcher.dropFirst()) + (launcher.isEmpty ? [] : [geoattrd]) + ["--config", directory.file("geoattrd.yaml"), "--state-dir", directory.file("state"),
                        "--state-file", directory.file("state-file"), "--socket", directory.file("api.sock")]
                + (arguments.contains("--index") ? [] : ["--index", directory.file("no-index.gidx")]) + arguments,
            environment: env,
            stderrFD: log.writeFD)
        log.closeWriteEnd()
        self.log = log
        self.directory = directory
    }

    /// Waits for a log line containing `text`, from line `start` on. For tests of what the log
    /// says; to wait for what the daemon does, the waits on its events (DaemonProcess+Events)
    /// do not depend on the wording.
    public func waitForLog(_ text: String, from start: Int = 0, timeout: Duration = .seconds(20 * TestTiming.scale)) async -> LineRecorder.Line? {
        await log.waitForLine(from: start, timeout: timeout) { $0.contains(text) }
    }

    /// How many log lines contain `text`.
    public func count(_ text: String) -> Int {
        log.all.filter { $0.text.contains(text) }.count
    }

    public func signal(_ signal: Int32) {
        process.signal(signal)
    }

    /// SIGTERM, then up to `grace` for a clean exit; the exit status (`nil`: had to be killed).
    @discardableResult
    public func stop(grace: Duration = .seconds(15)) async -> Int32? {
        process.signal(SIGTERM)
        if let status = await process.waitAsync(timeout: grace) { return status }
        process.signalGroup(SIGKILL)
        await process.waitAsync(timeout: .seconds(5))
        return nil
    }

    /// Replaces the state file atomically (write beside it, rename over), as a supervisor would.
    public func setState(_ content: String) throws {
        let temporary = directory.file("state-file.new")
        try content.write(toFile: temporary, atomically: false, encoding: .utf8)
        guard rename(temporary, stateFile) == 0 else {
            throw ChildProcess.SpawnError(description: "rename of the state file failed")
        }
    }
}
