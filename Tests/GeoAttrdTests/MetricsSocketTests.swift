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

/// The metrics socket of the real daemon (`api.metrics_socket`, or the descriptor systemd passes
/// as "metrics"): `GET /metrics` as the API's socket answers it, and 404 to every other request,
/// also from clients the API's socket lets do everything.
@Suite("geoattrd metrics socket")
struct MetricsSocketTests {
    /// Requests the API's socket answers for root, and a path it lacks.
    static let requests: [(method: String, target: String, body: String)] = [
        ("GET", "/v1/attributes", ""), ("GET", "/v1/attributes?format=prometheus", ""), ("GET", "/v1/status", ""),
        ("POST", "/v1/refresh", ""), ("POST", "/v1/refresh?wait=5", ""), ("PUT", "/v1/state", "background"),
        ("GET", "/v1/watch", ""), ("GET", "/v2/nothing", ""),
    ]
    /// Reads exact attributes and may mutate on the API's socket.
    static let privileged = 4343
    /// May see nothing on the API's socket.
    static let stranger = 4444

    static func config(metricsSocket: String?) -> String {
        APIProcessTests.staticConfig + """
            socket:
              mode: "0666"
            access:
              default_level: none
              rules: ["uid:\(privileged)=exact"]
              mutate: ["uid:\(privileged)"]

            """ + (metricsSocket.map { "api:\n  metrics_socket: \($0)\n" } ?? "")
    }

    /// A daemon with its metrics socket bound at `metrics.sock` in its directory, once it has
    /// its first fix.
    func startWithMetricsSocket() async throws -> (directory: TemporaryDirectory, metricsPath: String, daemon: DaemonProcess) {
        let directory = try TemporaryDirectory(prefix: "geoattrd")
        let metricsPath = directory.file("metrics.sock")
        let daemon = try DaemonProcess(config: Self.config(metricsSocket: metricsPath), directory: directory)
        try await daemon.waitForGeneration()
        return (directory, metricsPath, daemon)
    }

    /// The built geoattrctl as another uid and gid, against `socket`.
    func geoattrctl(as id: Int, _ arguments: [String], socket: String) async throws -> CommandResult {
        try await CommandResult.run(
            "setpriv", ["--reuid=\(id)", "--regid=\(id)", "--clear-groups", BuiltProducts.path(of: "geoattrctl")] + arguments + ["--socket", socket])
    }

    /// The value of the sample line starting with `series` in an exposition.
    static func sample(_ series: String, in text: String) -> String? {
        text.split(separator: "\n").first { $0.hasPrefix(series + " ") }.map { String($0.dropFirst(series.count + 1)) }
    }

    @Test("bound at api.metrics_socket, mode 0666: /metrics as on the API's socket, promtool-clean; 404 to every other request, for root; removed at exit")
    func boundAtConfiguredPath() async throws {
        let (directory, metricsPath, daemon) = try await startWithMetricsSocket()
        #expect(daemon.count("metrics socket listening") == 1)
        var info = stat()
        #expect(lstat(metricsPath, &info) == 0)
        #expect(info.st_mode & S_IFMT == S_IFSOCK)
        #expect(info.st_mode & 0o777 == 0o666)
        let metricsSocket = GeoAttrClient(socketPath: metricsPath)
        let api = GeoAttrClient(socketPath: daemon.socketPath)

        let scraped = try await metricsSocket.request("GET", "/metrics")
        let scrapedFromAPI = try await api.request("GET", "/metrics")
        #expect(scraped.status == 200)
        #expect(scraped.header("content-type") == scrapedFromAPI.header("content-type"))
        #expect(scraped.text.contains("geoattrd_build_info{") && scraped.text.contains(#"geoattrd_fixes_total{outcome="fix"} 1"#))
        let checked = try await PrometheusOutputTests.promtool(scraped.text, in: directory, name: "scraped.txt")
        #expect(checked.status == 0 && checked.stdout.isEmpty, "\(checked.stdout)\n\(scraped.text)")

        let accepted = #"geoattrd_refresh_requests_total{decision="accepted"}"#
        let acceptedBefore = Self.sample(accepted, in: scraped.text)
        for (method, target, body) in Self.requests {
            let answer = try await metricsSocket.request(method, target, body: Array(body.utf8))
            #expect(answer.status == 404, "\(method) \(target): \(answer.status) \(answer.text)")
            #expect(answer.text.contains(#""error":"not_found""#), "\(method) \(target): \(answer.text)")
        }
        // None of them reached the scheduler: still in the foreground, no refresh accepted.
        #expect(try await api.status().text.contains(#""state":"foreground""#))
        let scrapedAfter = try await metricsSocket.request("GET", "/metrics").text
        #expect(acceptedBefore != nil && Self.sample(accepted, in: scrapedAfter) == acceptedBefore, "\(scrapedAfter)")
        // The API's socket, for the same client: the control.
        #expect(try await api.request("GET", "/v1/attributes").status == 200)
        #expect(await daemon.stop() == 0)
        #expect(!FileManager.default.fileExists(atPath: metricsPath), "the metrics socket outlived the daemon")
    }

    @Test("other uids: 404 on the metrics socket whatever the API's socket grants them (everything, or nothing)")
    func otherUIDs() async throws {
        let (directory, metricsPath, daemon) = try await startWithMetricsSocket()
        chmod(directory.path, 0o755)
        // The controls, on the API's socket: one reads, the other is refused.
        #expect(try await geoattrctl(as: Self.privileged, ["get"], socket: daemon.socketPath).status == 0)
        #expect(try await geoattrctl(as: Self.stranger, ["get"], socket: daemon.socketPath).status == 77)
        for uid in [Self.privileged, Self.stranger] {
            for command in [["get"], ["status"], ["refresh"], ["state", "background"]] {
                let result = try await geoattrctl(as: uid, command, socket: metricsPath)
                #expect(result.status == 76, "uid \(uid) \(command): \(result.status) \(result.stderr)")
                #expect(result.stderr.contains("geoattrd answered 404 not_found"), "uid \(uid) \(command): \(result.stderr)")
            }
        }
        #expect(try await GeoAttrClient(socketPath: daemon.socketPath).status().text.contains(#""state":"foreground""#))
        #expect(await daemon.stop() == 0)
    }

    @Test("the metrics socket closes a connection that sends nothing, or stays idle after a scrape, within seconds, while the API's socket keeps its configured minute")
    func metricsConnectionsDoNotHoldSlots() async throws {
        let directory = try TemporaryDirectory(prefix: "geoattrd")
        let metricsPath = directory.file("metrics.sock")
        let config = Self.config(metricsSocket: nil) + "api:\n  metrics_socket: \(metricsPath)\n  head_timeout_s: 60\n  idle_timeout_s: 60\n"
        let daemon = try DaemonProcess(config: config, directory: directory)
        try await daemon.waitForGeneration()
        let silent = try RawUnixConnection(path: metricsPath)
        let scraped = try RawUnixConnection(path: metricsPath)
        let api = try RawUnixConnection(path: daemon.socketPath)
        let opened = ContinuousClock.now
        #expect(scraped.send("GET /metrics HTTP/1.1\r\nHost: geoattrd\r\n\r\n"))
        #expect(await scraped.read(until: "geoattrd_build_info", timeout: .seconds(10)).text.contains("200 OK"))
        // Closed well before the API's 60 s: the metrics socket's own limit is 5 s.
        #expect(await silent.read(timeout: .seconds(30)).closed, "a silent connection kept its slot")
        #expect(await scraped.read(timeout: .seconds(30)).closed, "an idle scrape connection kept its slot")
        let elapsed = ContinuousClock.now - opened
        #expect(elapsed >= .seconds(4) && elapsed < .seconds(30), "\(elapsed)")
        // The control: the API's socket, silent as long, is still open and answers.
        #expect(api.send("GET /v1/status HTTP/1.1\r\nHost: geoattrd\r\n\r\n"))
        #expect(await api.read(until: "\"state\"", timeout: .seconds(10)).text.contains("200 OK"))
        #expect(await daemon.stop() == 0)
    }

    @Test("passed by systemd as \"metrics\": served though api.metrics_socket is empty; the API's socket is found by its name, not its place")
    func passedBySystemd() async throws {
        let directory = try TemporaryDirectory(prefix: "geoattrd")
        let (apiPath, metricsPath) = (directory.file("activated-api.sock"), directory.file("activated-metrics.sock"))
        // As under systemd-socket-activate in SystemdTests, with the metrics socket passed first.
        let daemon = try DaemonProcess(
            config: Self.config(metricsSocket: nil), directory: directory,
            launcher: [
                "systemd-socket-activate", "-E", "TSAN_OPTIONS", "-E", "ASAN_OPTIONS", "-E", "LSAN_OPTIONS", "-E", "LD_PRELOAD",
                "-l", metricsPath, "-l", apiPath, "--fdname=metrics:api",
            ])
        #expect(await eventually { FileManager.default.fileExists(atPath: apiPath) && FileManager.default.fileExists(atPath: metricsPath) })
        let metricsSocket = GeoAttrClient(socketPath: metricsPath, timeout: .seconds(20))
        #expect(await eventually { (try? await metricsSocket.request("GET", "/metrics"))?.status == 200 })
        #expect(await daemon.waitForLog("using the metrics socket passed by systemd") != nil)
        #expect(try await metricsSocket.request("GET", "/v1/attributes").status == 404)
        let api = GeoAttrClient(socketPath: apiPath, timeout: .seconds(20))
        #expect(await eventually { (try? await api.request("GET", "/v1/attributes").text)?.contains("47.3769") == true })
        #expect(!FileManager.default.fileExists(atPath: daemon.socketPath), "the daemon bound an API socket of its own")
        #expect(await daemon.stop() == 0)
        #expect(FileManager.default.fileExists(atPath: metricsPath), "the daemon removed systemd's socket")
    }

    @Test("a metrics socket that cannot be bound stops the start, naming api.metrics_socket; what is at the path stays, the API's socket goes",
          arguments: ["missing/metrics.sock", "a-file"])
    func unbindableStopsTheStart(name: String) async throws {
        let directory = try TemporaryDirectory(prefix: "geoattrd")
        _ = try directory.write("not a socket", to: "a-file")
        let daemon = try DaemonProcess(config: Self.config(metricsSocket: directory.file(name)), directory: directory)
        let failed = try #require(await daemon.waitForLog("geoattrd failed"), "\(daemon.log.text)")
        #expect(failed.text.contains("api.metrics_socket: "), "\(failed.text)")
        #expect(await daemon.process.waitAsync(timeout: .seconds(20)) == 1)
        #expect(!FileManager.default.fileExists(atPath: daemon.socketPath), "the API's socket outlived the failed start")
        #expect((try? String(contentsOfFile: directory.file("a-file"), encoding: .utf8)) == "not a socket")
    }

    @Test("api.metrics_socket waits for a restart: a reload that changes it keeps the socket; an invalid value is refused whole")
    func reloadKeepsTheSocket() async throws {
        let (directory, metricsPath, daemon) = try await startWithMetricsSocket()
        try Self.config(metricsSocket: directory.file("other.sock")).write(toFile: daemon.configFile, atomically: true, encoding: .utf8)
        #expect(try await daemon.reload() == ReloadAnswer(applied: true, restartPending: ["api.metrics_socket"]))
        #expect(!FileManager.default.fileExists(atPath: directory.file("other.sock")))
        #expect(try await GeoAttrClient(socketPath: metricsPath).request("GET", "/metrics").status == 200)
        try Self.config(metricsSocket: "metrics.sock").write(toFile: daemon.configFile, atomically: true, encoding: .utf8)
        let refused = try await daemon.reload()
        #expect(!refused.applied)
        #expect(refused.reason.contains("api.metrics_socket: expected an absolute path"), "\(refused.reason)")
        #expect(try await GeoAttrClient(socketPath: metricsPath).request("GET", "/metrics").status == 200)
        #expect(await daemon.stop() == 0)
    }
}
