import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// What a running process holds, read from /proc: its open descriptors, its threads and its
/// children. The fault suite compares a snapshot taken after a fault with one taken before it.
public struct ProcessResources: Sendable, Equatable, CustomStringConvertible {
    /// The targets of /proc/PID/fd/* ("socket:[123]", "/var/lib/geoattrd/cache.json", ...), sorted.
    public var descriptors: [String]
    public var threads: Int
    /// PIDs whose parent is the process.
    public var children: [pid_t]

    public var description: String {
        "\(descriptors.count) descriptors, \(threads) threads, \(children.count) children"
            + (children.isEmpty ? "" : " \(children)")
    }

    /// `nil` when the process is gone.
    public static func of(_ pid: pid_t) -> ProcessResources? {
        let fdDirectory = "/proc/\(pid)/fd"
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: fdDirectory),
              let tasks = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")
        else { return nil }
        let descriptors = names.compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: "\(fdDirectory)/\($0)") }
        return ProcessResources(descriptors: descriptors.sorted(), threads: tasks.count, children: childProcesses(of: pid))
    }

    /// The names of the process's threads (/proc/PID/task/*/comm), as the process set them.
    public static func threadNames(of pid: pid_t) -> [String] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.compactMap { task in
            (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/comm", encoding: .utf8))?
                .trimmingCharacters(in: .newlines)
        }
    }

    /// Every process whose parent is `pid` (field 4 of /proc/N/stat).
    public static func childProcesses(of pid: pid_t) -> [pid_t] {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return [] }
        return entries.compactMap { entry -> pid_t? in
            guard let candidate = pid_t(entry),
                  let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                  let afterName = stat.range(of: ") ", options: .backwards)
            else { return nil }
            let fields = stat[afterName.upperBound...].split(separator: " ")
            guard fields.count > 1, pid_t(fields[1]) == pid else { return nil }
            return candidate
        }.sorted()
    }

    /// Whether this snapshot holds nothing more than `baseline` did: no more descriptors (by
    /// count, and no new kind of file), no more children, at most `threadSlack` more threads
    /// (the dispatch and concurrency pools grow and shrink on their own).
    public func holdsNoMore(than baseline: ProcessResources, threadSlack: Int = 4) -> Bool {
        descriptors.count <= baseline.descriptors.count
            && children.count <= baseline.children.count
            && threads <= baseline.threads + threadSlack
    }
}

/// The release build of geoattrd, which the fault suite runs: `GEOATTRD_BINARY` when set, else
/// `.build/release/geoattrd` of this package (scripts/fault-suite.sh builds it first).
public enum ReleaseBinary {
    public static var geoattrd: String {
        if let path = ProcessInfo.processInfo.environment["GEOATTRD_BINARY"], !path.isEmpty { return path }
        return RepositoryRoot.file(".build/release/geoattrd")
    }

    public static var isBuilt: Bool { access(geoattrd, X_OK) == 0 }
}

/// The cache file as a crash must leave it: absent, or one complete document the daemon wrote.
public enum CacheFileIntegrity {
    /// `nil` when the file is absent or complete (a JSON object with `schema` and a `result`
    /// holding a `fix`), else what is wrong with it.
    public static func problem(at path: String) -> String? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            return "\(path) is not one JSON object (\(data.count) bytes)"
        }
        guard object["schema"] is Int, let result = object["result"] as? [String: Any], result["fix"] is [String: Any] else {
            return "\(path) lacks schema/result/fix: \(String(decoding: data, as: UTF8.self))"
        }
        return nil
    }
}
