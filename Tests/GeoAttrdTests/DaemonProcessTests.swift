import Foundation
import GeoAttrClient
import GeoAttrModel
import Testing
import TestSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The daemon as it runs in the field: the built binary, a real gpsd fed by gpsfake, real
/// signals, real files in a private state directory. What the daemon does is read where its
/// clients see it: its status over the socket, its cache file and reload record; its log only
/// where what the log says is the point. gpsd's own debug log says when the daemon connected.
@Suite("geoattrd process")
struct DaemonProcessTests {
    static let watchRequest = "?WATCH={\"enable\":true,\"json\":true}"

    /// A steady 3D track that gpsfake loops over for as long as a test needs.
    static let steadyTrack = NMEATrack(
        epochs: NMEATrack.repeating(NMEATrack.Epoch(latitude: 52.3731, longitude: 4.8922, mode: 3), 20)).render()

    /// Connections the daemon made to gpsd (each one-shot fix enables a watch once).
    func gpsdConnections(_ gpsfake: GPSFake) -> Int {
        gpsfake.log.all.filter { $0.text.contains(Self.watchRequest) }.count
    }

    /// How many refresh requests the daemon has decided `decision` (accepted, joined, refused),
    /// by its metrics; `nil` while it does not answer.
    func refreshDecisions(_ daemon: DaemonProcess, _ decision: String) async -> Int? {
        guard let metrics = try? await daemon.client.request("GET", "/metrics").text else { return nil }
        let prefix = "geoattrd_refresh_requests_total{decision=\"\(decision)\"} "
        return metrics.split(separator: "\n").first { $0.hasPrefix(prefix) }.flatMap { Double($0.dropFirst(prefix.count)) }.map { Int($0) }
    }

    @Test("pause and resume by the state file: no gpsd connection while paused")
    func pauseAndResumeByStateFile() async throws {
        try await GPSFake.run(nmea: Self.steadyTrack, once: false, gpsdDebugLevel: 4) { gpsfake in
            let daemon = try DaemonProcess(config: "schedule:\n  ttl_s: 1\n", arguments: ["--gpsd", gpsfake.endpoint])
            try await daemon.waitForGeneration()
            try daemon.setState("background\n")
            let paused = try await daemon.waitForState(.background)
            // The journal says where the change came from.
            let pausedLine = try #require(await daemon.waitForLog("to=background"))
            #expect(pausedLine.text.contains("origin=\"state file\""))
            let connectionsWhenPaused = gpsdConnections(gpsfake)
            // Absence can only be shown over time: three TTLs paused without a connection, by the
            // daemon's own clock (the result was at most one TTL old when the pause began).
            try await daemon.waitForStatus("the served result four TTLs old") { ($0.cacheAgeS ?? 0) >= 4 }
            #expect(gpsdConnections(gpsfake) == connectionsWhenPaused, "the daemon connected to gpsd while paused")
            let stillPaused = try #require(await daemon.status())
            #expect(stillPaused.lastAttempt == paused.lastAttempt && !stillPaused.fixInFlight, "the daemon tried a fix while paused")
            try daemon.setState("  foreground  ")
            try await daemon.waitForState(.foreground)
            try await daemon.waitForGeneration(above: stillPaused.generation)
            #expect(gpsdConnections(gpsfake) > connectionsWhenPaused)
            #expect(await daemon.stop() == 0)
        }
    }

    @Test("pause by SIGTSTP, resume by SIGCONT")
    func pauseAndResumeBySignals() async throws {
        try await GPSFake.run(nmea: Self.steadyTrack, once: false, gpsdDebugLevel: 4) { gpsfake in
            let daemon = try DaemonProcess(config: "schedule:\n  ttl_s: 1\n", arguments: ["--gpsd", gpsfake.endpoint])
            try await daemon.waitForGeneration()
            daemon.signal(SIGTSTP)
            // Nothing else pauses it here: no state file is written.
            try await daemon.waitForState(.background)
            #expect(daemon.process.isRunning, "SIGTSTP stopped or killed the daemon")
            let connectionsWhenPaused = gpsdConnections(gpsfake)
            // Three TTLs paused, as above.
            try await daemon.waitForStatus("the served result four TTLs old") { ($0.cacheAgeS ?? 0) >= 4 }
            #expect(gpsdConnections(gpsfake) == connectionsWhenPaused, "the daemon connected to gpsd while paused")
            let pausedGeneration = await daemon.status()?.generation
            daemon.signal(SIGCONT)
            try await daemon.waitForState(.foreground)
            try await daemon.waitForGeneration(above: pausedGeneration)
            #expect(await daemon.stop() == 0)
        }
    }

    @Test("SIGUSR1 forces a fix in the background; requests during a fix join it; the budget holds")
    func refreshCoalescingAndBudget() async throws {
        // No fix for the first epochs, so the first forced fix stays in flight for a while: long
        // enough that the second SIGUSR1, sent once the test has seen the client in gpsd's log,
        // still finds it in flight on a loaded machine, where the daemon's start and connection
        // eat into the phase, which gpsfake replays from its own watcher's connection (12 and 24
        // epochs did not always do). 60 epochs are about 17 s, and about 50 s under a sanitizer,
        // where gpsfake replays 3 times slower (TestTiming): the wait for the fix below scales with it.
        let track = NMEATrack(
            epochs: NMEATrack.repeating(NMEATrack.noFix(satellitesInView: 6, withSignal: 3), 60)
                + NMEATrack.repeating(NMEATrack.Epoch(latitude: 52.3731, longitude: 4.8922, mode: 3), 60)).render()
        try await GPSFake.run(nmea: track, gpsdDebugLevel: 4) { gpsfake in
            let directory = try TemporaryDirectory(prefix: "geoattrd")
            _ = try directory.write("background\n", to: "state-file")
            let daemon = try DaemonProcess(
                config: "refresh:\n  burst: 2\n  interval_s: 3600\n", arguments: ["--gpsd", gpsfake.endpoint], directory: directory)
            try await daemon.waitUntilSignalsAreTrapped()
            let started = try await daemon.waitForState(.background)
            #expect(started.generation == nil && started.lastAttempt == nil)
            daemon.signal(SIGUSR1)
            try await daemon.waitForStatus("one refresh accepted") { $0.refreshesAccepted == 1 }
            _ = try #require(await gpsfake.clientUnderTest())
            daemon.signal(SIGUSR1)
            #expect(await eventually { await refreshDecisions(daemon, "joined") == 1 }, "the second request did not join the fix in flight")
            let first: StatusDocument
            do {
                first = try await daemon.waitForGeneration(timeout: .seconds(45 * TestTiming.scale))
            } catch {
                Issue.record("\(error)\ngpsd:\n\(gpsfake.log.text.suffix(3000))")
                throw error
            }
            #expect(first.refreshesAccepted == 1)
            daemon.signal(SIGUSR1)
            try await daemon.waitForStatus("a second refresh accepted") { $0.refreshesAccepted == 2 }
            try await daemon.waitForGeneration(above: first.generation)
            daemon.signal(SIGUSR1)
            let refused = try await daemon.waitForStatus("a refresh refused") { $0.refreshesRefused == 1 }
            #expect(refused.refreshesAccepted == 2)
            // The journal says who asked.
            let refusedLine = try #require(await daemon.waitForLog("refresh refused"))
            #expect(refusedLine.text.contains("origin=SIGUSR1"))
            #expect(gpsdConnections(gpsfake) == 2, "gpsd saw more fixes than the budget allows")
            #expect(await daemon.stop() == 0)
        }
    }

    @Test("restart with a persisted cache: served at once, without waiting for a fix")
    func restartServesPersistedCache() async throws {
        let directory = try TemporaryDirectory(prefix: "geoattrd")
        try await GPSFake.run(nmea: Self.steadyTrack, once: false) { gpsfake in
            let first = try DaemonProcess(arguments: ["--gpsd", gpsfake.endpoint, "--log-level", "debug"], directory: directory)
            let fixed = try await first.waitForGeneration()
            try await first.waitForCacheGeneration(atLeast: fixed.generation ?? .max)
            #expect(await first.stop() == 0)
        }
        let cached = try #require(DaemonProcess.cachedResult(in: directory.file("state")))
        let closedPort = try Loopback.freePort()
        let second = try DaemonProcess(arguments: ["--gpsd", "127.0.0.1:\(closedPort)", "--log-level", "debug"], directory: directory)
        let restored = try await second.waitForGeneration()
        #expect(restored.generation == cached.generation && restored.lastAttempt == nil)
        #expect(abs(cached.fix.latitude - 52.3731) < 1e-6)
        // What the journal says of it: whether it is stale, and the position at debug alone.
        let served = try #require(await second.waitForLog("serving the cached result"))
        #expect(served.text.contains("stale=false"))
        // The position only at debug: the journal may have more readers than the exact level.
        #expect(!served.text.contains("lat="))
        let position = try #require(await second.waitForLog("cached position"))
        #expect(position.text.contains("lat=52.3731"))
        // Served from the start, before any fix was even tried (gpsd is absent here, and the
        // cached result is younger than the TTL, so none is due).
        let started = try #require(await second.waitForLog("scheduler started"))
        #expect(started.text.contains("cache=\"age"))
        #expect(second.count("taking a fix") == 0)
        let running = try #require(await second.status())
        #expect(running.lastAttempt == nil && !running.fixInFlight, "a fix was tried: \(running)")
        #expect(second.process.isRunning)
        #expect(await second.stop() == 0)
    }

    @Test("a corrupted cache file is logged, set aside and replaced at the next fix")
    func corruptedCacheIsSetAside() async throws {
        try await GPSFake.run(nmea: Self.steadyTrack, once: false) { gpsfake in
            let directory = try TemporaryDirectory(prefix: "geoattrd")
            try FileManager.default.createDirectory(atPath: directory.file("state"), withIntermediateDirectories: true)
            _ = try directory.write("{\"schema\":1,\"result\":{\"fix\":", to: "state/cache.json")
            let daemon = try DaemonProcess(arguments: ["--gpsd", gpsfake.endpoint, "--log-level", "debug"], directory: directory)
            let corrupt = try #require(await daemon.waitForLog("is corrupt"))
            #expect(corrupt.text.contains("moved to"))
            #expect(FileManager.default.fileExists(atPath: directory.file("state/cache.json.corrupt")))
            let fixed = try await daemon.waitForGeneration()
            let cached = try await daemon.waitForCacheGeneration(atLeast: fixed.generation ?? .max)
            #expect(abs(cached.fix.latitude - 52.3731) < 1e-6)
            #expect(await daemon.stop() == 0)
        }
    }

    @Test("a read-only state directory: the write failure is logged, fixes go on, and writing resumes")
    func readOnlyStateDirectory() async throws {
        let directory = try TemporaryDirectory(prefix: "geoattrd")
        let state = directory.file("state")
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
        // A real read-only file system: a small tmpfs, remounted read-only mid-run.
        #expect(mount("tmpfs", state, "tmpfs", 0, "size=1m") == 0, "mounting a tmpfs needs root: \(String(cString: strerror(errno)))")
        defer { umount2(state, Int32(MNT_DETACH)) }
        try await GPSFake.run(nmea: Self.steadyTrack, once: false) { gpsfake in
            let daemon = try DaemonProcess(
                config: "schedule:\n  ttl_s: 1\n", arguments: ["--gpsd", gpsfake.endpoint, "--log-level", "debug"], directory: directory)
            let fixed = try await daemon.waitForGeneration()
            try await daemon.waitForCacheGeneration(atLeast: fixed.generation ?? .max)
            #expect(mount("tmpfs", state, "tmpfs", UInt(MS_REMOUNT | MS_RDONLY), "size=1m") == 0)
            // The point: the journal says why the cache is not written.
            let failed = try #require(await daemon.waitForLog("cannot write the cache file"))
            #expect(failed.text.contains("Read-only file system"))
            let atFailure = await daemon.status()?.generation
            let fixedAfter = try await daemon.waitForGeneration(above: atFailure)
            #expect(daemon.process.isRunning)
            #expect(mount("tmpfs", state, "tmpfs", UInt(MS_REMOUNT), "size=1m") == 0)
            try await daemon.waitForCacheGeneration(atLeast: fixedAfter.generation ?? .max)
            #expect(await daemon.stop() == 0)
        }
    }

    @Test("an invalid reload keeps the running configuration; a valid one applies")
    func invalidReloadKeepsRunningConfiguration() async throws {
        try await GPSFake.run(nmea: Self.steadyTrack, once: false) { gpsfake in
            let daemon = try DaemonProcess(config: "schedule:\n  ttl_s: 1\n", arguments: ["--gpsd", gpsfake.endpoint])
            try await daemon.waitForGeneration()
            try "schedule:\n  ttl_s: -5\n".write(toFile: daemon.configFile, atomically: true, encoding: .utf8)
            let refused = try await daemon.reload()
            #expect(!refused.applied)
            #expect(refused.reason.contains("schedule.ttl_s"), "\(refused.reason)")
            try await daemon.waitForGeneration(above: await daemon.status()?.generation)
            // What libyaml rejects: refused the same way, with the line and column.
            try "schedule:\n  ttl_s: [3600\n".write(toFile: daemon.configFile, atomically: true, encoding: .utf8)
            let syntax = try await daemon.reload()
            #expect(!syntax.applied)
            #expect(syntax.reason.contains("line 3, column 1: did not find expected ',' or ']'"), "\(syntax.reason)")
            try await daemon.waitForGeneration(above: await daemon.status()?.generation)
            // The journal says why, as the operator reads it there.
            let logged = try #require(await daemon.waitForLog("reload refused"))
            #expect(logged.text.contains("schedule.ttl_s"), "\(logged.text)")
            try "schedule:\n  ttl_s: 3600\n".write(toFile: daemon.configFile, atomically: true, encoding: .utf8)
            #expect(try await daemon.reload() == ReloadAnswer(applied: true))
            // The new TTL rules the schedule: the next fix is due in an hour, no longer in a second.
            try await daemon.waitForStatus("the next fix due in an hour") { status in
                guard let next = status.nextFixAt.flatMap(UTCTimestamp.init(iso8601:)) else { return false }
                return next.seconds > UTCTimestamp.now().seconds + 1800
            }
            #expect(daemon.process.isRunning)
            #expect(await daemon.stop() == 0)
        }
    }

    @Test("invalid configuration at start: exit 78 with one line naming the key", arguments: [
        ("fix:\n  max_error_m: lots\n", "fix.max_error_m"),
        ("schedule:\n  ttl_s: 0\n", "schedule.ttl_s"),
        ("state:\n  default: asleep\n", "state.default"),
        ("gpsd:\n  endpoint: \"nohost:\"\n", "gpsd.endpoint"),
        ("static:\n  latitude: 95\n  longitude: 1\n", "static"),
        ("this is: [not yaml\n", "bad.yaml: line 2, column 1: did not find expected ',' or ']'"),
        ("fix:\n  timeout_s: 5\nfix:\n  timeout_s: 6\n", "bad.yaml: line 4, column 3: fix.timeout_s: given twice (first at line 2)"),
        ("fix:\n  max_error_m: lots\n", "fix.max_error_m: expected a number, found 'lots' ("),
        // Fails closed: a key that is not one, anywhere, is never ignored.
        ("access:\n  default-level: none\n", "access.default-level: unknown key (did you mean access.default_level?)"),
        ("access:\n  rules:\n    uid:1001: country\n", "access.rules.uid:1001: unknown key (did you mean access.rules?)"),
        ("acess:\n  default_level: none\n", "acess.default_level: unknown key (did you mean access.default_level?)"),
        ("access:\n  rules: \"uid:1001=country\"\n", "access.rules"),
        ("access:\n  rules: [\"uid:1001=exact/2\"]\n", "access.rules"),
        ("access:\n  rules: [\"gid:5=country/1\"]\n", "access.rules"),
        ("outputs:\n  level: exact\n  decimals: 2\n", "outputs.decimals"),
        ("outputs:\n  group: no-such-group-here\n", "outputs.group"),
        ("outputs:\n  mode: \"0999\"\n", "outputs.mode"),
        ("api:\n  max_connections_per_uid: 0\n", "api.max_connections_per_uid"),
        ("api:\n  metrics_socket: metrics.sock\n", "api.metrics_socket: expected an absolute path"),
        ("api:\n  metrics_socket: /run/geoattrd/geoattrd.sock\n", "api.metrics_socket: '/run/geoattrd/geoattrd.sock' is socket.path too"),
        ("api:\n  metrics_socket: /" + String(repeating: "m", count: 107) + "\n", "api.metrics_socket: 108 bytes long"),
    ])
    func invalidConfigurationAtStart(config: String, key: String) async throws {
        let directory = try TemporaryDirectory(prefix: "geoattrd")
        _ = try directory.write(config, to: "bad.yaml")
        let result = try await CommandResult.run(
            BuiltProducts.path(of: "geoattrd"),
            ["--config", directory.file("bad.yaml"), "--state-dir", directory.path, "--state-file", directory.file("s")],
            timeout: .seconds(20))
        #expect(result.status == 78, "stderr: \(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count == 1, "stderr: \(result.stderr)")
        #expect(result.stderr.contains(key), "stderr: \(result.stderr)")
    }

    @Test("a GEOATTRD_* variable that names no key stops the daemon, naming the nearest")
    func unknownEnvironmentVariable() async throws {
        let directory = try TemporaryDirectory(prefix: "geoattrd")
        _ = try directory.write("", to: "empty.yaml")
        let result = try await CommandResult.run(
            BuiltProducts.path(of: "geoattrd"),
            ["--config", directory.file("empty.yaml"), "--state-dir", directory.path, "--state-file", directory.file("s"), "--check-config"],
            environment: ["GEOATTRD_ACCESS_DEFAULT_LEVL": "none"], timeout: .seconds(20))
        #expect(result.status == 78, "stderr: \(result.stderr)")
        #expect(result.stderr.contains("GEOATTRD_ACCESS_DEFAULT_LEVL: unknown key (did you mean GEOATTRD_ACCESS_DEFAULT_LEVEL?)"), "stderr: \(result.stderr)")
    }

    @Test("a configuration file that is a symbolic link or a FIFO is refused at once")
    func configurationFileMustBeRegular() async throws {
        let directory = try TemporaryDirectory(prefix: "geoattrd")
        _ = try directory.write("log:\n  level: info\n", to: "real.yaml")
        #expect(symlink(directory.file("real.yaml"), directory.file("link.yaml")) == 0)
        #expect(mkfifo(directory.file("fifo.yaml"), 0o600) == 0)
        for (name, kind) in [("link.yaml", "a symbolic link"), ("fifo.yaml", "a FIFO")] {
            let result = try await CommandResult.run(
                BuiltProducts.path(of: "geoattrd"),
                ["--config", directory.file(name), "--state-dir", directory.path, "--state-file", directory.file("s"), "--check-config"],
                timeout: .seconds(20))
            #expect(result.status == 78, "stderr: \(result.stderr)")
            #expect(result.stderr.contains("refused: \(kind), not a regular file"), "stderr: \(result.stderr)")
        }
    }
}

@Suite("geoattrd configuration")
struct DaemonConfigurationTests {
    func effective(_ arguments: [String], environment: [String: String] = [:]) async throws -> CommandResult {
        try await CommandResult.run(BuiltProducts.path(of: "geoattrd"), arguments + ["--check-config"], timeout: .seconds(20))
    }

    @Test("config/geoattrd.yaml documents exactly the built-in defaults")
    func shippedFileMatchesDefaults() async throws {
        let directory = try TemporaryDirectory(prefix: "geoattrd")
        _ = try directory.write("# nothing set\n", to: "empty.yaml")
        let shipped = try await effective(["--config", RepositoryRoot.file("config/geoattrd.yaml")])
        let defaults = try await effective(["--config", directory.file("empty.yaml")])
        #expect(shipped.status == 0, "stderr: \(shipped.stderr)")
        #expect(defaults.status == 0, "stderr: \(defaults.stderr)")
        #expect(shipped.stdout == defaults.stdout)
        #expect(shipped.stdout.contains("schedule.ttl_s = 3600"))
        #expect(shipped.stdout.contains("refresh.burst = 6"))
    }

    @Test("huge numbers are printed, not a crash (fix.fallback_error_m 1e60: a fuzzer's finding)")
    func hugeNumbers() async throws {
        let directory = try TemporaryDirectory(prefix: "geoattrd")
        _ = try directory.write("fix:\n  fallback_error_m: 1e60\n  max_error_m: 1e20\n", to: "c.yaml")
        let result = try await effective(["--config", directory.file("c.yaml")])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(result.stdout.contains("fix.fallback_error_m = 1e+60"), "\(result.stdout)")
        #expect(result.stdout.contains("fix.max_error_m = 1e+20"), "\(result.stdout)")
        #expect(result.stdout.contains("schedule.ttl_s = 3600"))
    }

    @Test("paths on the command line are taken against the working directory; relative paths in the file or the environment are refused, naming the key")
    func relativePaths() async throws {
        let directory = try TemporaryDirectory(prefix: "geoattrd")
        _ = try directory.write("log:\n  level: info\n", to: "c.yaml")
        // As a shell in the directory runs it: geoattrd --config c.yaml --index data/world.gidx ...
        let script = "cd \"$1\" && shift && exec \"$@\""
        let geoattrd = BuiltProducts.path(of: "geoattrd")
        let flags = [
            "--config", "c.yaml", "--index", "data/world.gidx", "--socket", "./run/g.sock", "--state-file", "state",
            "--state-dir", "cache", "--check-config",
        ]
        let relative = try await CommandResult.run("/bin/sh", ["-c", script, "sh", directory.path, geoattrd] + flags, timeout: .seconds(20))
        #expect(relative.status == 0, "stderr: \(relative.stderr)")
        // The working directory as the kernel gives it: no symbolic link, no trailing slash.
        let base = try #require(realpath(directory.path, nil).map { pointer in
            defer { free(pointer) }
            return String(cString: pointer)
        })
        for line in [
            "index.path = \(base)/data/world.gidx", "socket.path = \(base)/run/g.sock",
            "state.file = \(base)/state", "state.dir = \(base)/cache", "log.level = info",
        ] {
            #expect(relative.stdout.contains(line + "\n"), "\(line) not in:\n\(relative.stdout)")
        }
        _ = try directory.write("index:\n  path: data/world.gidx\n", to: "relative.yaml")
        let inFile = try await effective(["--config", directory.file("relative.yaml")])
        #expect(inFile.status == 78 && inFile.stderr.contains("index.path: expected an absolute path; got 'data/world.gidx'"), "\(inFile.stderr)")
        let inEnvironment = try await CommandResult.run(
            geoattrd, ["--config", directory.file("c.yaml"), "--check-config"], environment: ["GEOATTRD_INDEX_PATH": "data/world.gidx"],
            timeout: .seconds(20))
        #expect(inEnvironment.status == 78 && inEnvironment.stderr.contains("index.path: expected an absolute path"), "\(inEnvironment.stderr)")
    }

    @Test("flags win over the environment, which wins over the file")
    func precedence() async throws {
        let directory = try TemporaryDirectory(prefix: "geoattrd")
        _ = try directory.write("gpsd:\n  endpoint: \"10.0.0.1:1000\"\nschedule:\n  ttl_s: 100\nrefresh:\n  burst: 3\n", to: "c.yaml")
        let environment = ["GEOATTRD_SCHEDULE_TTL_S": "200", "GEOATTRD_GPSD_ENDPOINT": "10.0.0.2:2000"]
        let process = try ChildProcess(
            executable: BuiltProducts.path(of: "geoattrd"),
            arguments: ["--config", directory.file("c.yaml"), "--gpsd", "127.0.0.1:3000", "--check-config"],
            environment: BuiltProducts.childEnvironment(adding: environment), stdoutPath: directory.file("out"))
        #expect(await process.waitAsync(timeout: .seconds(20)) == 0)
        let output = try String(contentsOfFile: directory.file("out"), encoding: .utf8)
        #expect(output.contains("gpsd.endpoint = 127.0.0.1:3000"))
        #expect(output.contains("schedule.ttl_s = 200"))
        #expect(output.contains("refresh.burst = 3"))
    }

    @Test("a configuration file named on the command line must exist")
    func namedFileMustExist() async throws {
        let result = try await effective(["--config", "/nonexistent/geoattrd.yaml"])
        #expect(result.status == 78)
        #expect(result.stderr.contains("/nonexistent/geoattrd.yaml"))
    }
}
