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

/// The socket API of the real daemon, over its real socket: the client library, curl-like raw
/// requests, clients running as other uids (through setpriv), and clients that misbehave.
@Suite("geoattrd socket API")
struct APIProcessTests {
    static let staticConfig = "gpsd:\n  enabled: false\nstatic:\n  latitude: 47.3769\n  longitude: 8.5417\n  error_m: 25\n"

    func start(_ extra: String = "", static useStatic: Bool = true) async throws -> DaemonProcess {
        let daemon = try DaemonProcess(config: (useStatic ? Self.staticConfig : "") + extra)
        // Serving, and past the point where SIGTERM is a graceful shutdown: the scheduler, one of
        // the service group's services, has run an attempt.
        if useStatic {
            try await daemon.waitForGeneration()
        } else {
            try await daemon.waitForStatus("a first fix attempt") { $0.lastAttempt != nil }
        }
        return daemon
    }

    func attributesAvailable(_ client: GeoAttrClient) async -> Bool {
        await eventually { (try? await client.attributes()) != nil }
    }

    @Test("every endpoint and format answers as documented")
    func endpointsAndFormats() async throws {
        let daemon = try await start()
        let client = GeoAttrClient(socketPath: daemon.socketPath)
        #expect(await attributesAvailable(client))
        let document = try await client.attributes()
        #expect(document.attributes["geo.location.lat"] == .double(47.3769))
        #expect(document.source == "static")
        #expect(document.precision == "exact")
        #expect(document.errorM == 25)
        #expect(!document.stale)

        let otel = try await client.attributes(format: .otel)
        #expect(otel.text == "geo.location.lat=47.3769,geo.location.lon=8.5417\n")
        let env = try await client.attributes(format: .env)
        #expect(env.text == "GEO_LOCATION_LAT=\"47.3769\"\nGEO_LOCATION_LON=\"8.5417\"\n")
        let prometheus = try await client.attributes(format: .prometheus)
        // Without an index there is no place to label; the coordinates are gauges of their own.
        #expect(prometheus.text.contains("\ngeoattrd_location_info 1\n"))
        #expect(prometheus.text.contains("\ngeoattrd_location_latitude_degrees 47.3769\n"))
        #expect(prometheus.text.contains("\ngeoattrd_location_longitude_degrees 8.5417\n"))

        let etag = try #require(otel.header("etag"))
        let unchanged = try await client.attributes(format: .json, ifNoneMatch: etag)
        #expect(unchanged.status == 304)
        #expect(unchanged.body.isEmpty)

        let status = try await client.status().text
        #expect(status.contains("\"state\":\"foreground\""))
        _ = try await client.setState(.background)
        #expect(try await client.status().text.contains("\"state\":\"background\""))

        let notFound = try await client.request("GET", "/v2/nothing")
        #expect(notFound.status == 404)
        #expect(notFound.text.contains("\"error\":\"not_found\""))
        let wrongMethod = try await client.request("DELETE", "/v1/attributes")
        #expect(wrongMethod.status == 405)
        let badFormat = try await client.request("GET", "/v1/attributes?format=xml")
        #expect(badFormat.status == 400)
        let metrics = try await client.request("GET", "/metrics")
        #expect(metrics.text.contains("geoattrd_requests_total"))
        #expect(metrics.text.contains("geoattrd_fixes_total{outcome=\"fix\"}"))
        #expect(metrics.text.contains("geoattrd_time_to_fix_seconds"))
        #expect(!metrics.text.contains("47.3769"), "metrics must not carry location data")
        #expect(await daemon.stop() == 0)
        #expect(!FileManager.default.fileExists(atPath: daemon.socketPath), "the socket file outlived the daemon")
    }

    @Test("the socket is created with the configured mode")
    func socketMode() async throws {
        let daemon = try await start("socket:\n  mode: \"0600\"\n")
        var info = stat()
        #expect(stat(daemon.socketPath, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o600)
        #expect(await daemon.stop() == 0)
    }

    @Test("before any location: 503 no_location")
    func noLocationYet() async throws {
        let port = try Loopback.freePort()
        let daemon = try await start("gpsd:\n  endpoint: \"127.0.0.1:\(port)\"\n", static: false)
        let response = try await GeoAttrClient(socketPath: daemon.socketPath).request("GET", "/v1/attributes")
        #expect(response.status == 503)
        #expect(response.text.contains("\"error\":\"no_location\""))
        #expect(await daemon.stop() == 0)
    }

    @Test("POST /v1/refresh?wait returns the new attributes; a spent budget is 429 with Retry-After")
    func refreshWaitAndBudget() async throws {
        let daemon = try await start("refresh:\n  burst: 1\n  interval_s: 600\n")
        let client = GeoAttrClient(socketPath: daemon.socketPath)
        #expect(await attributesAvailable(client))
        let before = try await client.attributes().generation
        let refreshed = try await client.refresh(wait: .seconds(5))
        #expect(refreshed.status == 200)
        #expect(refreshed.text.contains("\"geo.location.lat\":47.3769"))
        #expect(try await client.attributes().generation > before)
        let refused = try await client.request("POST", "/v1/refresh")
        #expect(refused.status == 429)
        #expect(Int(refused.header("retry-after") ?? "") ?? 0 > 500)
        #expect(refused.text.contains("refresh_budget_spent"))
        #expect(await daemon.stop() == 0)
    }

    @Test("a spent budget: a reload keeps Retry-After, and one that raises refresh.burst lets the refresh through")
    func raisingTheBurstUnblocksRefresh() async throws {
        let daemon = try await start("refresh:\n  burst: 1\n  interval_s: 600\n")
        let client = GeoAttrClient(socketPath: daemon.socketPath)
        #expect(await attributesAvailable(client))
        #expect(try await client.refresh(wait: .seconds(5)).status == 200)
        let spent = try await client.request("POST", "/v1/refresh")
        #expect(spent.status == 429)
        let before = Int(spent.header("retry-after") ?? "") ?? 0
        #expect(try await daemon.reload().applied)
        let still = try await client.request("POST", "/v1/refresh")
        #expect(still.status == 429)
        #expect((Int(still.header("retry-after") ?? "") ?? .max) <= before, "the reload lengthened the wait: \(before) -> \(still.header("retry-after") ?? "-")")
        try (APIProcessTests.staticConfig + "refresh:\n  burst: 3\n  interval_s: 600\n")
            .write(toFile: daemon.configFile, atomically: true, encoding: .utf8)
        #expect(try await daemon.reload().applied)
        #expect(try await client.refresh(wait: .seconds(5)).status == 200)
        #expect(await daemon.stop() == 0)
    }

    /// Runs the built geoattrctl as another uid and gid (no such user needs to exist).
    func geoattrctl(as id: Int, _ arguments: [String]) async throws -> CommandResult {
        try await CommandResult.run(
            "setpriv", ["--reuid=\(id)", "--regid=\(id)", "--clear-groups", BuiltProducts.path(of: "geoattrctl")] + arguments)
    }

    @Test("clients see what their uid or gid is entitled to, through every endpoint and format")
    func precisionByPeerCredentials() async throws {
        let daemon = try await start("""
            socket:
              mode: "0666"
            access:
              default_level: none
              rules: ["uid:4242=country", "gid:4343=locality/2"]
              mutate: ["uid:4343"]

            """)
        chmod(daemon.directory.path, 0o755)
        let socket = ["--socket", daemon.socketPath]
        #expect(await attributesAvailable(GeoAttrClient(socketPath: daemon.socketPath)))

        let country = try await geoattrctl(as: 4242, ["get"] + socket)
        #expect(country.status == 0, "stderr: \(country.stderr)")
        #expect(country.stdout.contains("\"precision\":\"country\""))
        #expect(country.stdout.hasSuffix("}\n"), "get ends its line: \(country.stdout)")
        for format in ["json", "otel", "env", "prometheus"] {
            let output = try await geoattrctl(as: 4242, ["get", "--format", format] + socket).stdout
            // The times carry digits of their own ("...T17:33:18.543Z", "1795800798.543"): only
            // what is left of them may not hold a coordinate.
            let withoutTimes = output.split(separator: "\n").filter { !$0.contains("_timestamp_seconds ") }.joined(separator: "\n")
                .replacing(#/"(fix_time|updated_at)":"[^"]*"/#, with: "")
            #expect(
                !withoutTimes.contains("47.3") && !withoutTimes.contains("8.54") && !withoutTimes.contains("error_m"),
                "\(format): \(output)")
        }
        let countryRefresh = try await geoattrctl(as: 4242, ["refresh"] + socket)
        #expect(countryRefresh.status == 77)

        let locality = try await geoattrctl(as: 4343, ["get"] + socket)
        #expect(locality.stdout.contains("\"geo.location.lat\":47.38"))
        #expect(!locality.stdout.contains("47.3769"))
        #expect(try await geoattrctl(as: 4343, ["refresh"] + socket).status == 0)

        let stranger = try await geoattrctl(as: 4444, ["get"] + socket)
        #expect(stranger.status == 77)
        #expect(stranger.stderr.contains("403"))
        #expect(stranger.stderr.contains("no access.rules entry names uid 4444 or one of its groups, and access.default_level is none"), "\(stranger.stderr)")
        #expect(try await geoattrctl(as: 0, ["get"] + socket).stdout.contains("47.3769"))
        #expect(await daemon.stop() == 0)
    }

    @Test("a gid:0 rule applies to members of group 0 alone: a client with no group or other groups gets the default")
    func groupZeroRuleMatchesOnlyGroupZero() async throws {
        let daemon = try await start("""
            socket:
              mode: "0666"
            access:
              default_level: country
              rules: ["gid:0=none"]

            """)
        chmod(daemon.directory.path, 0o755)
        let socket = ["--socket", daemon.socketPath]
        #expect(await attributesAvailable(GeoAttrClient(socketPath: daemon.socketPath)))
        func get(groups: String) async throws -> CommandResult {
            try await CommandResult.run(
                "setpriv", ["--reuid=4545", "--regid=4545", groups, BuiltProducts.path(of: "geoattrctl"), "get"] + socket)
        }
        for groups in ["--clear-groups", "--groups=4545", "--groups=27,4545"] {
            let outsider = try await get(groups: groups)
            #expect(outsider.status == 0 && outsider.stdout.contains("\"precision\":\"country\""), "\(groups): \(outsider.stderr)")
        }
        for groups in ["--groups=0", "--groups=0,27,4545"] {
            let member = try await get(groups: groups)
            #expect(member.status == 77 && member.stderr.contains("403"), "\(groups): \(member.status) \(member.stdout)")
        }
        #expect(await daemon.stop() == 0)
    }

    @Test("oversized, malformed, slow and silent clients get their error and are closed")
    func misbehavingClients() async throws {
        let daemon = try await start("api:\n  head_timeout_s: 0.5\n")
        let path = daemon.socketPath

        let huge = try RawUnixConnection(path: path)
        huge.send("GET /v1/attributes HTTP/1.1\r\nhost: x\r\nx-padding: \(String(repeating: "a", count: 9000))\r\n\r\n")
        let hugeAnswer = await huge.read()
        #expect(hugeAnswer.text.hasPrefix("HTTP/1.1 431"))
        #expect(hugeAnswer.closed)

        let megabyte = try RawUnixConnection(path: path)
        megabyte.send("GET /v1/attributes HTTP/1.1\r\n")
        for _ in 0..<1024 where megabyte.send("x-h: \(String(repeating: "b", count: 1000))\r\n") {}
        #expect(await megabyte.read().text.hasPrefix("HTTP/1.1 431"))

        let body = try RawUnixConnection(path: path)
        body.send("PUT /v1/state HTTP/1.1\r\nhost: x\r\ncontent-length: 2000\r\n\r\n" + String(repeating: "z", count: 2000))
        #expect(await body.read().text.hasPrefix("HTTP/1.1 413"))

        let garbage = try RawUnixConnection(path: path)
        garbage.send("\u{01}\u{02}NOT HTTP AT ALL\r\n\r\n")
        let garbageAnswer = await garbage.read()
        #expect(garbageAnswer.text.hasPrefix("HTTP/1.1 400"))
        #expect(garbageAnswer.closed)

        // One byte at a time, never finishing the head in time: disconnected.
        let slow = try RawUnixConnection(path: path)
        var slowClosed = false
        for byte in "GET /v1/attributes HTTP/1.1\r\n".utf8 {
            if !slow.send([byte]) { slowClosed = true; break }
            if await slow.read(timeout: .milliseconds(100)).closed { slowClosed = true; break }
        }
        #expect(slowClosed)

        let silent = try RawUnixConnection(path: path)
        #expect(await silent.read(timeout: .seconds(5)).closed)

        // None of that disturbed anyone else.
        let client = GeoAttrClient(socketPath: path)
        #expect(await attributesAvailable(client))
        #expect(daemon.process.isRunning)
        #expect(await daemon.stop() == 0)
    }

    @Test("connections beyond the limit get a clean 503; the others keep being served")
    func connectionLimit() async throws {
        let daemon = try await start("api:\n  max_connections: 4\n")
        let client = GeoAttrClient(socketPath: daemon.socketPath)
        #expect(await attributesAvailable(client))
        // Wait until the server has let go of those earlier connections: only this one is left,
        // and then until that one has gone too.
        #expect(await eventually {
            (try? await client.request("GET", "/metrics").text)?.contains("geoattrd_connected_clients 1.0") == true
        })
        // The metrics connection may not be released yet (a loaded machine): the four held
        // connections must each have been served before the fifth is the excess one.
        var held: [RawUnixConnection] = []
        let allServed = await eventually(timeout: .seconds(20), interval: .milliseconds(50)) {
            held = []
            for _ in 0..<4 {
                guard let connection = try? RawUnixConnection(path: daemon.socketPath),
                      connection.send("GET /v1/attributes HTTP/1.1\r\nhost: x\r\n\r\n"),
                      await connection.read(until: "47.3769").text.hasPrefix("HTTP/1.1 200")
                else { return false }
                held.append(connection)
            }
            return true
        }
        #expect(allServed, "four connections were never served at once under max_connections 4")
        let excess = try RawUnixConnection(path: daemon.socketPath)
        let answer = await excess.read()
        #expect(answer.text.hasPrefix("HTTP/1.1 503"))
        #expect(answer.text.contains("too_many_connections"))
        held[0].send("GET /v1/attributes HTTP/1.1\r\nhost: x\r\n\r\n")
        #expect(await held[0].read(until: "47.3769").text.hasPrefix("HTTP/1.1 200"))
        held.removeAll()
        #expect(await attributesAvailable(client))
        #expect(await daemon.stop() == 0)
    }

    @Test("watch: the current attributes at once, then each change; clients that vanish are cleaned up; SIGTERM ends the stream")
    func watchStream() async throws {
        let daemon = try await start("api:\n  heartbeat_s: 0.2\n")
        let client = GeoAttrClient(socketPath: daemon.socketPath)
        #expect(await attributesAvailable(client))
        for _ in 0..<20 {
            let vanishing = try RawUnixConnection(path: daemon.socketPath)
            vanishing.send("GET /v1/watch HTTP/1.1\r\nhost: x\r\n\r\n")
            #expect(await vanishing.read(until: "event: attributes").text.contains("text/event-stream"))
        }
        let raw = try RawUnixConnection(path: daemon.socketPath)
        raw.send("GET /v1/watch HTTP/1.1\r\nhost: x\r\n\r\n")
        #expect(await raw.read(until: ": heartbeat").text.contains(": heartbeat"))

        var updates = client.watch().makeAsyncIterator()
        let first = try #require(try await updates.next())
        _ = try await client.refresh(wait: .seconds(5))
        let second = try #require(try await updates.next())
        #expect(second.generation > first.generation)
        // The vanished watchers are gone: the raw one, the client's watch and this request remain.
        #expect(await eventually {
            (try? await client.request("GET", "/metrics").text)?.contains("geoattrd_connected_clients 3.0") == true
        })
        let started = ContinuousClock.now
        daemon.signal(SIGTERM)
        #expect(try await updates.next() == nil, "the watch did not end cleanly at shutdown")
        #expect(await daemon.process.waitAsync(timeout: .seconds(10 * TestTiming.scale)) == 0)
        #expect(ContinuousClock.now - started < .seconds(10 * TestTiming.scale))
        #expect(await raw.read(timeout: .seconds(5)).closed)
    }

    @Test("watch is the last request on its connection: a request sent after it, or the client's EOF, ends the stream at once")
    func watchEndsOnPipelinedRequestOrEOF() async throws {
        let daemon = try await start("api:\n  heartbeat_s: 30\n")
        let client = GeoAttrClient(socketPath: daemon.socketPath)
        #expect(await attributesAvailable(client))
        // Pipelined behind the watch, in small pieces: the server keeps reading and closes, so
        // the client never blocks on a full socket buffer (a fuzzer's finding).
        let pipelining = try RawUnixConnection(path: daemon.socketPath)
        pipelining.send("GET /v1/watch HTTP/1.1\r\nhost: x\r\n\r\n")
        #expect(await pipelining.read(until: "event: attributes").text.contains("text/event-stream"))
        let started = ContinuousClock.now
        // A server that stopped reading would leave these sends blocked: give up after 2 s.
        var sendTimeout = timeval(tv_sec: 2, tv_usec: 0)
        setsockopt(pipelining.fd, SOL_SOCKET, SO_SNDTIMEO, &sendTimeout, socklen_t(MemoryLayout<timeval>.size))
        let pipelined = Array(String(repeating: "GET /v1/attributes HTTP/1.1\r\nhost: x\r\n\r\n", count: 200).utf8)
        for offset in stride(from: 0, to: pipelined.count, by: 2) {
            guard pipelining.send(Array(pipelined[offset..<min(offset + 2, pipelined.count)])) else { break }
        }
        #expect(await pipelining.read(timeout: .seconds(5)).closed, "the watch went on after a pipelined request")
        // A client that half-closes after the watch: the stream ends without waiting for a heartbeat.
        let halfClosing = try RawUnixConnection(path: daemon.socketPath)
        halfClosing.send("GET /v1/watch HTTP/1.1\r\nhost: x\r\n\r\n")
        #expect(await halfClosing.read(until: "event: attributes").text.contains("text/event-stream"))
        shutdown(halfClosing.fd, Int32(SHUT_WR))
        #expect(await halfClosing.read(timeout: .seconds(5)).closed, "the watch outlived the client's EOF")
        #expect(ContinuousClock.now - started < .seconds(20 * TestTiming.scale))
        // Both are gone from the server's books; it serves on.
        #expect(await eventually {
            (try? await client.request("GET", "/metrics").text)?.contains("geoattrd_connected_clients 1.0") == true
        })
        #expect(await attributesAvailable(client))
        #expect(await daemon.stop() == 0)
    }
}

@Suite("geoattrd file outputs")
struct FileOutputTests {
    @Test("the env and textfile outputs are rewritten on every change, at their configured precision; crashed writers' temporaries are removed")
    func outputsFollowChanges() async throws {
        let directory = try TemporaryDirectory(prefix: "geoattrd")
        // What a writer killed mid-write leaves behind, and one of a writer still running (ours).
        let exited = try ChildProcess(executable: "true", arguments: [])
        #expect(await exited.waitAsync(timeout: .seconds(10)) == 0)
        let stale = [directory.file("geo.env.tmp-\(exited.pid)"), directory.file("geo.prom.tmp-\(exited.pid)")]
        let live = directory.file("geo.env.tmp-\(getpid())")
        for path in stale + [live] { #expect(FileManager.default.createFile(atPath: path, contents: Data("partial".utf8))) }
        let daemon = try DaemonProcess(
            config: APIProcessTests.staticConfig + """
                outputs:
                  env_file: \(directory.file("geo.env"))
                  prometheus_file: \(directory.file("geo.prom"))
                  level: region
                  decimals: 1

                """)
        try await daemon.waitForGeneration()
        #expect(await eventually {
            FileManager.default.fileExists(atPath: directory.file("geo.env")) && FileManager.default.fileExists(atPath: directory.file("geo.prom"))
        })
        let env = (try? String(contentsOfFile: directory.file("geo.env"), encoding: .utf8)) ?? ""
        #expect(env == "OTEL_RESOURCE_ATTRIBUTES=\"geo.location.lat=47.4,geo.location.lon=8.5\"\n")
        let prom = try String(contentsOfFile: directory.file("geo.prom"), encoding: .utf8)
        #expect(prom.contains("\ngeoattrd_location_latitude_degrees 47.4\n"))
        #expect(prom.contains("\ngeoattrd_location_longitude_degrees 8.5\n"))
        #expect(!prom.contains("47.3769"))
        for path in stale { #expect(!FileManager.default.fileExists(atPath: path), "\(path) was left in place") }
        #expect(FileManager.default.fileExists(atPath: live), "a running writer's temporary file was removed")
        #expect(await daemon.stop() == 0)
    }
}

@Suite("geoattrctl doctor")
struct DoctorTests {
    /// What doctor prints (no daemon) against gpsfake replaying a track dated 2040, once gpsd has
    /// read its date; `udp` feeds gpsd over UDP instead of a pseudo-terminal.
    static func doctorOnTrackDated2040(udp: Bool) async throws -> String {
        var future = NMEATrack(epochs: NMEATrack.repeating(NMEATrack.Epoch(latitude: 45.4642, longitude: 9.19, mode: 3), 20))
        future.year = 2040
        return try await GPSFake.run(nmea: future.render(), once: false, gpsdDebugLevel: 4, udp: udp) { gpsfake in
            // Until gpsd has read a date, its reports carry no time at all.
            _ = try #require(
                await gpsfake.log.waitForLine(timeout: .seconds(20)) { $0.contains("\"time\":\"2040-") },
                "gpsd never reported 2040: \(gpsfake.log.text.suffix(2000))")
            return try await CommandResult.run(
                BuiltProducts.path(of: "geoattrctl"),
                ["doctor", "--socket", "/nonexistent/geoattrd.sock", "--gpsd", gpsfake.endpoint, "--timeout", "20"]
            ).stdout
        }
    }

    @Test("finds a paused daemon, a working receiver and a receiver time that cannot be right; fails when nothing is there")
    func doctorFindings() async throws {
        let track = NMEATrack(epochs: NMEATrack.repeating(NMEATrack.Epoch(latitude: 45.4642, longitude: 9.19, mode: 3), 20)).render()
        try await GPSFake.run(nmea: track, once: false) { gpsfake in
            let daemon = try DaemonProcess(config: APIProcessTests.staticConfig)
            try await daemon.waitForGeneration()
            try daemon.setState("background")
            try await daemon.waitForState(.background)
            let result = try await CommandResult.run(
                BuiltProducts.path(of: "geoattrctl"), ["doctor", "--socket", daemon.socketPath, "--gpsd", gpsfake.endpoint, "--timeout", "20"])
            #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
            #expect(result.stdout.contains("[warn] state: the daemon is paused"))
            // gpsfake feeds gpsd through a pseudo-terminal: a replay, said as such.
            #expect(result.stdout.contains("[warn] receiver: 3D fix"), "\(result.stdout)")
            #expect(result.stdout.contains("is a pseudo-terminal: a recorded track (gpsfake) or a simulator, not a receiver"), "\(result.stdout)")
            #expect(result.stdout.contains("[ok  ] socket"))
            // gpsd on loopback, unguarded: doctor, as root, tries as uid 65534 and gets in.
            #expect(result.stdout.contains("[warn] gpsd access: any local user reaches gpsd at \(gpsfake.endpoint) (tried as uid 65534)"), "\(result.stdout)")
            #expect(result.stdout.contains("geoattrd-gpsd-guard.service"), "\(result.stdout)")
            // gpsd made its shared-memory export at its start (mode 0666 in Debian's build), which
            // the guard does not reach: named, with its key.
            #expect(result.stdout.contains("[warn] gpsd access: gpsd's shared memory is readable by every local user ("), "\(result.stdout)")
            #expect(result.stdout.contains("key 0x47505344 mode 666"), "\(result.stdout)")
            // The tests' daemons run without a world index: the load is refused, and said with its path.
            #expect(result.stdout.contains("[warn] index: the daemon refused its index file: "), "\(result.stdout)")
            #expect(await daemon.stop() == 0)
        }
        // A receiver dating its fixes 2040: said, with what to check, and the fix still counts.
        // Over UDP, gpsd names the device as it would a network receiver, not a pseudo-terminal.
        let wrongTime = try await Self.doctorOnTrackDated2040(udp: true)
        #expect(wrongTime.contains("[ok  ] receiver: 3D fix"), "\(wrongTime)")
        #expect(wrongTime.contains("[warn] clock: the receiver's time 2040-"), "\(wrongTime)")
        #expect(wrongTime.contains("week rollover"), "\(wrongTime)")
        // The same replay on a pseudo-terminal: the recording's time, not the clocks, is said.
        let replay = try await Self.doctorOnTrackDated2040(udp: false)
        #expect(replay.contains("[ok  ] clock: the replayed fixes carry the recording's time 2040-"), "\(replay)")
        #expect(!replay.contains("week rollover") && !replay.contains("chronyc"), "\(replay)")
        let port = try Loopback.freePort()
        let nothing = try await CommandResult.run(
            BuiltProducts.path(of: "geoattrctl"), ["doctor", "--socket", "/nonexistent/geoattrd.sock", "--gpsd", "127.0.0.1:\(port)", "--timeout", "2"])
        #expect(nothing.status == 1)
        #expect(nothing.stdout.contains("[FAIL] socket"))
        #expect(nothing.stdout.contains("[FAIL] gpsd"))
        #expect(nothing.stdout.contains("fix: "))
    }
}

@Suite("examples")
struct ExampleTests {
    @Test("the Python sidecar starts a program with the attributes in OTEL_RESOURCE_ATTRIBUTES")
    func pythonSidecar() async throws {
        let daemon = try DaemonProcess(config: APIProcessTests.staticConfig)
        try await daemon.waitForGeneration()
        let script = RepositoryRoot.file("examples/otel_env_sidecar.py")
        let result = try await CommandResult.run(
            "python3", [script, "--socket", daemon.socketPath, "--", "sh", "-c", "echo \"$OTEL_RESOURCE_ATTRIBUTES\""])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "geo.location.lat=47.3769,geo.location.lon=8.5417\n")
        #expect(await daemon.stop() == 0)
    }
}
