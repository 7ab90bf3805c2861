import Foundation

/// A private directory for one test, removed when the value goes away.
public final class TemporaryDirectory: Sendable {
    public let path: String

    public init(prefix: String = "geoattrd-test") throws {
        let base = ProcessInfo.processInfo.environment["TMPDIR"] ?? "/tmp"
        var template = Array("\(base)/\(prefix)-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else {
            throw ChildProcess.SpawnError(description: "mkdtemp failed in \(base)")
        }
        path = String(cString: made)
        chmod(path, 0o755)
    }

    public func file(_ name: String) -> String { "\(path)/\(name)" }

    public func write(_ text: String, to name: String) throws -> String {
        let target = file(name)
        try text.write(toFile: target, atomically: true, encoding: .utf8)
        return target
    }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }
}
