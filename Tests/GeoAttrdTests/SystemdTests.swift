import Foundation
import GeoAttrClient
import Testing
import TestSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// systemd integration without systemd as PID 1: the test listens on a NOTIFY_SOCKET of its
/// own, and systemd-socket-activate passes the listening socket.
@Suite("systemd integration")
struct SystemdTests {
    @Test("READY once serving, STATUS, WATCHDOG from the main loop, RELOADING then READY on SIGHUP, STOPPING at shutdown")
    func notifyProtocol() async throws {
        let directory = try TemporaryDirectory(prefix: "geoattrd")
        let listener = try NotifyListener(directory: directory)
        let daemon = try DaemonProcess(
            config: APIProcessTests.staticConfig, directory: directory,
            environment: ["NOTIFY_SOCKET": listener.path, "WATCHDOG_USEC": "300000"])
        let ready = try #require(await listener.waitFor("READY=1"), "\(daemon.log.text)")
        #expect(ready.text.contains("STATUS=foreground"))
        // Ready means clients can connect.
        #expect((try? await GeoAttrClient(socketPath: daemon.socketPath).status()) != nil)
        let firstPing = try #require(await listener.waitFor("WATCHDOG=1", from: ready.index))
        #expect(await listener.waitFor("WATCHDOG=1", from: firstPing.index + 1) != nil)
        #expect(await listener.waitFor("STATUS=foreground, last fix") != nil)
        try daemon.setState("background")
        #expect(await listener.waitFor("STATUS=background") != nil)
        daemon.signal(SIGHUP)
        let reloading = try #require(await listener.waitFor("RELOADING=1", from: ready.index))
        #expect(reloading.text.contains("MONOTONIC_USEC="))
        #expect(await listener.waitFor("READY=1", from: reloading.index + 1) != nil)
        daemon.signal(SIGTERM)
        #expect(await listener.waitFor("STOPPING=1") != nil)
        #expect(await daemon.process.waitAsync(timeout: .seconds(15)) == 0)
    }

    @Test("socket activation: the passed socket is served, and none is bound at socket.path")
    func socketActivation() async throws {
        let directory = try TemporaryDirectory(prefix: "geoattrd")
        let activated = directory.file("activated.sock")
        // systemd-socket-activate passes on no environment but what -E names: under a sanitizer
        // (scripts/sanitize.sh) the daemon's options, with them where its reports go, and the
        // preload that annotates Mutex for TSan.
        let daemon = try DaemonProcess(
            config: APIProcessTests.staticConfig, directory: directory,
            launcher: [
                "systemd-socket-activate", "-E", "TSAN_OPTIONS", "-E", "ASAN_OPTIONS", "-E", "LSAN_OPTIONS", "-E", "LD_PRELOAD",
                "-l", activated, "--fdname=api",
            ])
        // systemd-socket-activate binds first and starts the daemon on the first connection.
        #expect(await eventually { FileManager.default.fileExists(atPath: activated) })
        let client = GeoAttrClient(socketPath: activated, timeout: .seconds(20))
        #expect(await eventually { (try? await client.request("GET", "/v1/attributes").text)?.contains("47.3769") == true })
        #expect(await daemon.waitForLog("using the socket passed by systemd") != nil)
        #expect(!FileManager.default.fileExists(atPath: daemon.socketPath), "the daemon bound a socket of its own")
        #expect(await daemon.stop() == 0)
        // The passed socket belongs to its owner (systemd): the daemon does not remove it.
        #expect(FileManager.default.fileExists(atPath: activated))
    }
}
