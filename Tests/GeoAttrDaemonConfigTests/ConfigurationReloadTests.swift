import GeoAttrCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Logging
import Synchronization
import Testing
import TestSupport

@testable import GeoAttrDaemonConfig

/// Records what a reload applied, in order.
final class RecordingTarget: ReloadTarget {
    let applied = Mutex<[DaemonConfiguration]>([])
    func apply(_ configuration: DaemonConfiguration) async { applied.withLock { $0.append(configuration) } }
}

@Suite("a reload applies a valid configuration whole, or nothing")
struct ConfigurationReloadTests {
    func setUp(_ initial: String) async throws -> (TemporaryDirectory, String, ConfigurationReload, RecordingTarget, RecordedLog) {
        let directory = try TemporaryDirectory(prefix: "geoattrd-reload")
        let path = try directory.write(initial, to: "geoattrd.yaml")
        let loader = ConfigurationLoader(flags: [:], environment: [:], filePath: path, explicit: true)
        let target = RecordingTarget()
        let log = RecordedLog()
        let reload = ConfigurationReload(loader: loader, running: try await loader.load(), target: target, logger: log.logger)
        return (directory, path, reload, target, log)
    }

    @Test("a valid file is applied; keys for the next restart are named, once each")
    func applies() async throws {
        let (directory, _, reload, target, log) = try await setUp("schedule:\n  ttl_s: 60\n")
        _ = try directory.write("schedule:\n  ttl_s: 120\nsocket:\n  path: /run/other.sock\napi:\n  max_connections: 10\n", to: "geoattrd.yaml")
        #expect(await reload.reload() == .applied(restartPending: ["socket.path", "api.max_connections"]))
        let applied = target.applied.withLock { $0 }
        #expect(applied.count == 1)
        #expect(applied.first?.schedule.ttl == .seconds(120))
        #expect(reload.current.schedule.ttl == .seconds(120))
        #expect(log.count(.warning, "socket.path changed: takes effect at the next restart") == 1)
        #expect(log.count(.warning, "api.max_connections changed") == 1)
        #expect(log.count(.info, "configuration reloaded") == 1)
    }

    @Test("an invalid file is refused whole: nothing is applied and the running configuration stays", arguments: [
        "schedule:\n  ttl_s: -5\n",
        "schedule:\n  ttl_s: [120\n",
        "schedule:\n  ttl_s: 120\n  tll_s: 5\n",
        "schedule:\n  ttl_s: 120\naccess:\n  default_level: secret\n",
    ])
    func refuses(text: String) async throws {
        let (directory, _, reload, target, log) = try await setUp("schedule:\n  ttl_s: 60\n")
        _ = try directory.write(text, to: "geoattrd.yaml")
        guard case .refused(let reason) = await reload.reload() else {
            Issue.record("applied \(text.debugDescription)")
            return
        }
        #expect(reason.hasPrefix("invalid configuration: "))
        #expect(target.applied.withLock { $0.isEmpty })
        #expect(reload.current.schedule.ttl == .seconds(60))
        #expect(log.count(.error, "reload refused, keeping the running configuration") == 1)
    }

    @Test("a file gone after start is refused when it was named, and the running configuration stays")
    func fileGone() async throws {
        let (directory, path, reload, target, _) = try await setUp("log:\n  level: debug\n")
        defer { withExtendedLifetime(directory) {} }
        #expect(unlink(path) == 0)
        #expect(await reload.reload() == .refused("invalid configuration: file \(path): no such file"))
        #expect(target.applied.withLock { $0.isEmpty })
        #expect(reload.current.logLevel == .debug)
    }
}
