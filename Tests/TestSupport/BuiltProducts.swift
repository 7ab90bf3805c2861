import Foundation

/// Paths of the executables SwiftPM built beside the test bundle.
public enum BuiltProducts {
    public static var directory: String {
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return (executable as NSString).deletingLastPathComponent
    }

    public static func path(of product: String) -> String {
        "\(directory)/\(product)"
    }

    /// The test's environment for a child, without the harness's own variables (geoattrd
    /// refuses GEOATTRD_* variables that name no key): GEOATTRD_BINARY, every GEOATTRD_TEST_*
    /// (the back office's and the Python integration's, which CI may set for the whole suite),
    /// GPSFake's, plus `extra`. GPSFake reads its variables in the test's own process and starts
    /// its command with the whole environment, so no child of this one needs them.
    public static func childEnvironment(adding extra: [String: String] = [:]) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment.removeValue(forKey: "GEOATTRD_BINARY")
        for key in environment.keys where key.hasPrefix("GEOATTRD_TEST_") { environment.removeValue(forKey: key) }
        environment.removeValue(forKey: GPSFake.commandVariable)
        environment.removeValue(forKey: GPSFake.releaseVariable)
        environment.removeValue(forKey: "JOURNAL_STREAM")
        for (key, value) in extra { environment[key] = value }
        return environment
    }
}

/// Runs a built executable to completion and captures what it printed.
public struct CommandResult: Sendable {
    public var status: Int32
    public var stdout: String
    public var stderr: String
    public var elapsed: Duration

    /// - Parameter environment: added to the test's own environment.
    public static func run(
        _ executable: String, _ arguments: [String], environment: [String: String] = [:], timeout: Duration = .seconds(60)
    ) async throws -> CommandResult {
        let directory = try TemporaryDirectory(prefix: "run")
        let started = ContinuousClock.now
        let process = try ChildProcess(
            executable: executable, arguments: arguments, environment: BuiltProducts.childEnvironment(adding: environment),
            stdoutPath: directory.file("stdout"), stderrPath: directory.file("stderr"))
        let status = await process.waitAsync(timeout: timeout)
        let elapsed = ContinuousClock.now - started
        if status == nil { process.terminate() }
        return CommandResult(
            status: status ?? -1,
            stdout: (try? String(contentsOfFile: directory.file("stdout"), encoding: .utf8)) ?? "",
            stderr: (try? String(contentsOfFile: directory.file("stderr"), encoding: .utf8)) ?? "",
            elapsed: elapsed)
    }
}
