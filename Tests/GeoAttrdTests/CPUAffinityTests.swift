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
        // NIO names its event loops' threads NIO-ELT-<group>-#<loop>.
        let loops = ProcessResources.threadNames(of: daemon.process.pid).filter { $0.hasPrefix("NIO-ELT-") }
        #expect(loops.count == 1, "event loop threads: \(loops)")
        let document = try await GeoAttrClient(socketPath: daemon.socketPath).attributes()
        #expect(document.attributes["geo.location.lat"] == .double(47.3769))
        #expect(await daemon.stop() == 0)
    }
}
