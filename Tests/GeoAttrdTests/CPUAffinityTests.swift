import Foundation
import GeoAttrClient
import GeoAttrModel
import Testing
import TestSupport

/// The daemon held to fewer CPUs than the machine has, as `taskset` or systemd's `CPUAffinity=`
/// holds it: one event loop per CPU it may use, not per CPU of the machine.
@Suite("geoattrd on the CPUs it may use")
struct CPUAffinityTests {
    @Test("held to one CPU, the daemon runs one event loop and answers")
    func oneEventLoopOnOneCPU() async throws {
        let daemon = try DaemonProcess(config: APIProcessTests.staticConfig, launcher: ["/usr/bin/taskset", "-c", "0"])
        try await daemon.waitForGeneration()
        #expect(Self.eventLoopThreads(of: daemon.process.pid) == 1)
        let document = try await GeoAttrClient(socketPath: daemon.socketPath).attributes()
        #expect(document.attributes["geo.location.lat"] == .double(47.3769))
        #expect(await daemon.stop() == 0)
    }

    /// Threads named by NIO's event loop group (`NIO-ELT-<group>-#<loop>`).
    static func eventLoopThreads(of pid: pid_t) -> Int {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.filter { task in
            let name = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/comm", encoding: .utf8)) ?? ""
            return name.hasPrefix("NIO-ELT-")
        }.count
    }
}
