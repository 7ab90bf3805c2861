import Foundation
import GeoAttrClient
import Testing
import TestSupport

#if canImport(Glibc)
import Glibc
#endif

/// What an operator runs against a live daemon and relies on the answer of: a reload that says
/// whether it was applied, a watch that follows a change of what its user may see, a refusal
/// that names the rule to change.
extension APIProcessTests {
    @Test("geoattrctl reload: exit 0 once the configuration is in force, 78 with the reason when it is refused, and the daemon keeps serving")
    func reloadSaysWhetherItWasApplied() async throws {
        let daemon = try await start("refresh:\n  burst: 1\n  interval_s: 600\n")
        let client = GeoAttrClient(socketPath: daemon.socketPath)
        #expect(await attributesAvailable(client))
        let stateDirectory = daemon.directory.file("state")
        func reload(_ extra: [String] = []) async throws -> CommandResult {
            try await CommandResult.run(BuiltProducts.path(of: "geoattrctl"), ["reload", "--state-dir", stateDirectory, "--timeout", "20"] + extra)
        }
        try (APIProcessTests.staticConfig + "refresh:\n  burst: 4\n  interval_s: 600\n").write(toFile: daemon.configFile, atomically: true, encoding: .utf8)
        let applied = try await reload()
        #expect(applied.status == 0, "\(applied.stderr)")
        // In force when the command returns, not some time after.
        let status = try await client.status().text
        #expect(status.contains("\"refresh_tokens\":4"), "\(status)")

        try (APIProcessTests.staticConfig + "refresh:\n  burst: 4\n  intervall_s: 600\n").write(toFile: daemon.configFile, atomically: true, encoding: .utf8)
        let refused = try await reload()
        #expect(refused.status == 78, "\(refused.stdout)\(refused.stderr)")
        #expect(refused.stderr.contains("refused the configuration and keeps the running one: invalid configuration:"), "\(refused.stderr)")
        #expect(refused.stderr.contains("intervall_s"), "\(refused.stderr)")
        #expect(try await client.request("GET", "/v1/attributes").status == 200)

        // A key read at start only: applied, and named as waiting for a restart. The state
        // directory from the unit's environment, as ExecReload= sees it.
        try (APIProcessTests.staticConfig + "refresh:\n  burst: 4\n  interval_s: 600\napi:\n  max_connections: 40\n")
            .write(toFile: daemon.configFile, atomically: true, encoding: .utf8)
        let pending = try await CommandResult.run(
            BuiltProducts.path(of: "geoattrctl"), ["reload", "--pid", "\(daemon.process.pid)", "--timeout", "20"],
            environment: ["GEOATTRD_STATE_DIR": stateDirectory])
        #expect(pending.status == 0, "\(pending.stderr)")
        #expect(pending.stderr.contains("api.max_connections changed: takes effect at the next restart"), "\(pending.stderr)")

        // Who may not read the state directory is told so, not that there is no daemon.
        let stranger = try await CommandResult.run(
            "setpriv", ["--reuid=4242", "--regid=4242", "--clear-groups", BuiltProducts.path(of: "geoattrctl"), "reload", "--state-dir", stateDirectory])
        #expect(stranger.status == 77, "\(stranger.stderr)")
        #expect(stranger.stderr.contains("run as root or as the daemon's user"), "\(stranger.stderr)")

        // A record from another boot names no daemon, even with a live pid in it.
        let record = try String(contentsOfFile: stateDirectory + "/reload", encoding: .utf8)
        let otherBoot = record.split(separator: "\n").map { $0.hasPrefix("boot ") ? "boot 00000000-0000-0000-0000-000000000000" : String($0) }
        try (otherBoot.joined(separator: "\n") + "\n").write(toFile: stateDirectory + "/reload", atomically: true, encoding: .utf8)
        let stale = try await reload(["--timeout", "2"])
        #expect(stale.status == 69, "\(stale.stderr)")
        #expect(daemon.count("SIGHUP: reloading") == 3, "\(daemon.log.text)")

        // A pid that is not the daemon's, recorded or given: nothing is signalled.
        let sleeper = try ChildProcess(executable: "sleep", arguments: ["30"])
        defer { sleeper.terminate() }
        let wrong = try await reload(["--pid", "\(sleeper.pid)", "--timeout", "1"])
        #expect(wrong.status == 69 || wrong.status == 75, "\(wrong.stderr)")
        #expect(await daemon.stop() == 0)
        let gone = try await reload(["--timeout", "2"])
        #expect(gone.status == 69, "\(gone.stderr)")
    }

    @Test("geoattrctl watch follows a reload that changes its user's grant: a line at the new level, then 77 when refused")
    func watchFollowsAGrantChange() async throws {
        func config(_ rule: String) -> String {
            "socket:\n  mode: \"0666\"\naccess:\n  default_level: none\n  rules: [\"\(rule)\"]\n"
        }
        let daemon = try await start(config("uid:4242=locality"))
        chmod(daemon.directory.path, 0o755)
        #expect(await attributesAvailable(GeoAttrClient(socketPath: daemon.socketPath)))
        let output = daemon.directory.file("watch.out")
        let watch = try ChildProcess(
            executable: "setpriv",
            arguments: ["--reuid=4242", "--regid=4242", "--clear-groups", BuiltProducts.path(of: "geoattrctl"), "watch", "--socket", daemon.socketPath],
            stdoutPath: output)
        defer { watch.terminate() }
        func lines() -> [String] {
            ((try? String(contentsOfFile: output, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
        }
        #expect(await eventually { lines().count == 1 })
        #expect(lines().first?.contains("\"precision\":\"locality\"") == true, "\(lines())")

        try (APIProcessTests.staticConfig + config("uid:4242=country")).write(toFile: daemon.configFile, atomically: true, encoding: .utf8)
        let toCountry = try await daemon.reload()
        #expect(toCountry.applied, "the reload was refused: \(toCountry.reason)")
        #expect(await eventually { lines().count == 2 }, "\(lines())")
        #expect(lines().last?.contains("\"precision\":\"country\"") == true, "\(lines())")
        #expect(watch.isRunning)

        try (APIProcessTests.staticConfig + config("uid:4242=none")).write(toFile: daemon.configFile, atomically: true, encoding: .utf8)
        let toNone = try await daemon.reload()
        #expect(toNone.applied, "the reload was refused: \(toNone.reason)")
        #expect(await watch.waitAsync(timeout: .seconds(20)) == 77)
        #expect(lines().count == 2)
        #expect(await daemon.stop() == 0)
    }

    @Test("a refused client reads which access.rules entry refuses it, and doctor repeats it")
    func refusalNamesTheRule() async throws {
        let daemon = try await start("socket:\n  mode: \"0666\"\naccess:\n  rules: [\"gid:4646=region\", \"uid:4646=none\"]\n")
        chmod(daemon.directory.path, 0o755)
        #expect(await attributesAvailable(GeoAttrClient(socketPath: daemon.socketPath)))
        let get = try await CommandResult.run(
            "setpriv", ["--reuid=4646", "--regid=4646", "--clear-groups", BuiltProducts.path(of: "geoattrctl"), "get", "--socket", daemon.socketPath])
        #expect(get.status == 77)
        #expect(get.stderr.contains("access.rules entry uid:4646=none decides for this uid (a uid: entry decides before every gid: entry)"), "\(get.stderr)")
        let doctor = try await CommandResult.run(
            "setpriv",
            ["--reuid=4646", "--regid=4646", "--clear-groups", BuiltProducts.path(of: "geoattrctl"), "doctor", "--socket", daemon.socketPath, "--gpsd", "127.0.0.1:1", "--timeout", "1"])
        #expect(doctor.stdout.contains("[FAIL] access: the daemon refuses this user: uid 4646 may not read location data: access.rules entry uid:4646=none"), "\(doctor.stdout)")
        #expect(doctor.stdout.contains("a uid: entry decides before every gid: entry), then: systemctl reload geoattrd"), "\(doctor.stdout)")
        #expect(await daemon.stop() == 0)
    }
}
