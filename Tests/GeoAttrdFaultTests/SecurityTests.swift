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

/// The daemon against a hostile local user, as a process: links planted where it writes, FIFOs
/// and links where it reads, clients whose rights a reload lowers, clients with supplementary
/// groups, configurations with typos, one uid opening connections without end, a cache that
/// lies about its generation, and what its log must keep to itself. Untrusted clients connect
/// with uids and groups of their own (61001-61009, through setpriv); the test runs as root.
@Suite("security: hostile local users", .serialized, .timeLimit(.minutes(1)))
struct SecurityTests {
    /// A client with no rule of its own.
    static let reader = Peer(uid: 61001, gid: 61001)

    /// The access section with `lines` under it.
    static func accessConfig(_ lines: String...) -> String {
        "access:\n" + lines.map { "  \($0)\n" }.joined()
    }

    // MARK: Writes that must not follow planted links

    @Test("a symlink planted at the cache's old temporary name is not followed: the file it points to keeps its content and mode")
    func cacheWriteIgnoresPlantedSymlink() async throws {
        let fault = try await FaultDaemon.start(config: SecurityConfig.base + SecurityConfig.generousRefresh)
        let daemon = fault.daemon
        let outside = try TemporaryDirectory(prefix: "victim")
        let victim = try Victim(path: outside.file("victim"))
        // The start's own write first: the planted link must meet the write of a later fix.
        let first = await eventually(timeout: .seconds(10)) { FileProbe.cacheGeneration(daemon.cacheFile) != nil }
        try #require(first, "no cache written at start: \(daemon.logTail())")
        let planted = "\(daemon.stateDirectory)/cache.json.tmp-\(daemon.process.pid)"
        try #require(symlink(victim.path, planted) == 0, "planting \(planted): errno \(errno)")

        let refreshed = try await fault.client.refresh(wait: .seconds(10))
        let generation = try #require(
            (try? JSONDecoder().decode(AttributesDocument.self, from: Data(refreshed.body)))?.generation, "the forced fix served nothing: \(refreshed.text)")
        let written = await eventually(timeout: .seconds(10)) { (FileProbe.cacheGeneration(daemon.cacheFile) ?? 0) >= generation }
        #expect(written, "the cache of generation \(generation) was not written: \(daemon.logTail())")
        #expect(victim.damage == nil, "the cache write went through the planted link: \(victim.damage ?? "")")
        #expect(FileProbe.kind(daemon.cacheFile) == "regular file", "cache.json is a \(FileProbe.kind(daemon.cacheFile))")
        await fault.stop()
        withExtendedLifetime(outside) {}
    }

    @Test("a symlink planted at the env file's old temporary name is not followed: the file it points to is neither rewritten nor made 0644")
    func envFileWriteIgnoresPlantedSymlink() async throws {
        let directory = try TemporaryDirectory(prefix: "geoattrd-sec")
        let envFile = directory.file("attrs.env")
        let fault = try await FaultDaemon.start(
            config: SecurityConfig.base + SecurityConfig.generousRefresh + "outputs:\n  env_file: \"\(envFile)\"\n  level: exact\n", directory: directory)
        let daemon = fault.daemon
        let outside = try TemporaryDirectory(prefix: "victim")
        let victim = try Victim(path: outside.file("victim"))
        let first = await eventually(timeout: .seconds(10)) { FileProbe.contents(envFile).contains("OTEL_RESOURCE_ATTRIBUTES") }
        try #require(first, "no env file written at start: \(daemon.logTail())")
        let before = try #require(FileProbe.inode(envFile))
        let planted = "\(envFile).tmp-\(daemon.process.pid)"
        try #require(symlink(victim.path, planted) == 0, "planting \(planted): errno \(errno)")

        _ = try await fault.client.refresh(wait: .seconds(10))
        let rewritten = await eventually(timeout: .seconds(10)) { FileProbe.inode(envFile).map { $0 != before } ?? false }
        #expect(rewritten, "the env file was not rewritten after a new fix: \(daemon.logTail())")
        #expect(victim.damage == nil, "the env file write went through the planted link: \(victim.damage ?? "")")
        #expect(FileProbe.kind(envFile) == "regular file", "the env file is a \(FileProbe.kind(envFile))")
        await fault.stop()
        withExtendedLifetime(outside) {}
    }

    @Test("symlinks planted at the socket's old staging names for the next pids: nothing behind them is removed, the daemon starts")
    func socketStagingIgnoresPlantedSymlinks() async throws {
        let directory = try TemporaryDirectory(prefix: "geoattrd-sec")
        let decoys = try TemporaryDirectory(prefix: "decoy")
        let last = try #require(Self.kernelNumber("ns_last_pid"))
        let pidMax = try #require(Self.kernelNumber("pid_max"))
        // The kernel hands out the pids after the last one and, at pid_max, starts again at 300
        // (RESERVED_PIDS) on a machine that has used that many.
        let pids = (1...200).map { step in last + step < pidMax ? last + step : 300 + (last + step - pidMax) }
        for pid in pids {
            let target = decoys.file("d-\(pid)")
            try FileManager.default.createDirectory(atPath: target, withIntermediateDirectories: false)
            _ = try Victim(path: "\(target)/s")
            try #require(symlink(target, directory.file("api.sock.staging-\(pid)")) == 0)
        }
        let (daemon, outcome) = try await DaemonProcess.launch(config: SecurityConfig.base, directory: directory)
        let removed = pids.filter { access(decoys.file("d-\($0)/s"), F_OK) != 0 }
        #expect(removed.isEmpty, "files removed through planted staging links, pids \(removed) (geoattrd is pid \(daemon.process.pid))")
        #expect(outcome == .started, "geoattrd \(outcome) with links at the old staging names: \(daemon.logTail())")
        #expect(pids.contains(daemon.process.pid), "geoattrd got pid \(daemon.process.pid), outside the planted \(pids.first ?? 0) ... \(pids.last ?? 0): nothing was tested")
        if outcome == .started {
            let answered = (try? await GeoAttrClient(socketPath: daemon.socketPath, timeout: .seconds(5)).status()) != nil
            #expect(answered, "geoattrd does not answer on its socket")
        }
        await daemon.stop(grace: .seconds(5))
        withExtendedLifetime(decoys) {}
    }

    /// A number from /proc/sys/kernel.
    static func kernelNumber(_ name: String) -> Int32? {
        (try? String(contentsOfFile: "/proc/sys/kernel/\(name)", encoding: .utf8))
            .flatMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
    }

    // MARK: Reads of files that are not regular files

    @Test("a FIFO as the state file at start: the daemon starts and answers within seconds, and says why it refused the file")
    func stateFileFIFOAtStart() async throws {
        try #require(ReleaseBinary.isBuilt, "no release build at \(ReleaseBinary.geoattrd)")
        let directory = try TemporaryDirectory(prefix: "geoattrd-sec")
        try #require(mkfifo(directory.file("state-file"), 0o644) == 0)
        let daemon = try DaemonProcess(config: SecurityConfig.base, directory: directory, executable: ReleaseBinary.geoattrd)
        let client = GeoAttrClient(socketPath: daemon.socketPath, timeout: .seconds(2))
        let answered = await eventually(timeout: .seconds(8), interval: .milliseconds(50)) { (try? await client.status()) != nil }
        #expect(answered, "no answer on the socket 8 s after the start with a FIFO as the state file: \(daemon.logTail())")
        #expect(daemon.count("state file refused") > 0, "no refusal of the FIFO logged: \(daemon.logTail())")
        let status = await daemon.stop(grace: .seconds(5))
        if answered { #expect(status == 0, "exit status \(status.map(String.init) ?? "killed, 5 s after SIGTERM"): \(daemon.logTail())") }
    }

    @Test("the state file replaced by a FIFO while running: SIGTERM still ends the daemon cleanly within 5 s")
    func stateFileReplacedByFIFO() async throws {
        let fault = try await FaultDaemon.start(config: SecurityConfig.base)
        let daemon = fault.daemon
        let fifo = daemon.directory.file("state-file.fifo")
        try #require(mkfifo(fifo, 0o644) == 0)
        let mark = daemon.log.all.count
        try #require(rename(fifo, daemon.stateFile) == 0)
        // The refusal, when the daemon gets to log one (a daemon blocked in open() logs nothing).
        _ = await daemon.waitForLog("state file", from: mark, timeout: .seconds(3))
        let started = ContinuousClock.now
        let status = await daemon.stop(grace: .seconds(5))
        let took = ContinuousClock.now - started
        #expect(status == 0, "no clean exit within 5 s of SIGTERM (\(status.map { "status \($0)" } ?? "killed") after \(took)): \(daemon.logTail())")
    }

    @Test("the state file as a symlink to a file that says background: refused, the daemon stays in the foreground")
    func stateFileSymlinkRefused() async throws {
        let directory = try TemporaryDirectory(prefix: "geoattrd-sec")
        let real = try directory.write("background\n", to: "elsewhere-state")
        try #require(symlink(real, directory.file("state-file")) == 0)
        let fault = try await FaultDaemon.start(config: SecurityConfig.base, directory: directory, waitForResult: false)
        let daemon = fault.daemon
        let state = await fault.status()?["state"] as? String
        #expect(state == "foreground", "state \(state ?? "-") read through a symlinked state file")
        #expect(daemon.count("state file refused") > 0, "no refusal of the symlinked state file logged: \(daemon.logTail())")
        await fault.stop()
    }

    @Test("the configuration file given as a symlink: exit 78 at start")
    func configFileSymlinkRefused() async throws {
        let directory = try TemporaryDirectory(prefix: "geoattrd-sec")
        let real = try directory.write(SecurityConfig.base, to: "real.yaml")
        let linked = directory.file("linked.yaml")
        try #require(symlink(real, linked) == 0)
        // The last --config wins: the link, in place of the harness's own file.
        let (daemon, outcome) = try await DaemonProcess.launch(config: SecurityConfig.base, arguments: ["--config", linked], directory: directory)
        #expect(outcome == .exited(78), "geoattrd \(outcome) with a symlinked configuration file: \(daemon.logTail(600))")
        #expect(outcome != .exited(78) || daemon.count("invalid configuration") > 0, "no configuration error on stderr: \(daemon.logTail(600))")
        await daemon.stop(grace: .seconds(5))
    }

    // MARK: A reload that lowers a client's access

    @Test("a reload that lowers a client to country ends its open watch stream within seconds")
    func reloadEndsWatchStreamOfLoweredClient() async throws {
        let config = SecurityConfig.base + Self.accessConfig("default_level: exact")
        let fault = try await FaultDaemon.start(config: config)
        let daemon = fault.daemon
        let watch = try await PeerConnection.open(daemon.socketPath, as: Self.reader)
        watch.send(HTTPText.get("/v1/watch"))
        #expect(await watch.read(until: "event: attributes", timeout: .seconds(10)), "no first event: \(watch.received.prefix(300))")
        #expect(watch.received.contains("geo.location.lat"), "the exact client's first event has no coordinates: \(watch.received.prefix(300))")

        let outcome = try await daemon.reload(to: config + "  rules: [\"uid:\(Self.reader.uid)=country\"]\n")
        try #require(outcome?.contains("configuration reloaded") == true, "reload: \(outcome ?? "no outcome logged")")
        let ended = await watch.waitForEnd(timeout: .seconds(5))
        #expect(ended, "the watch stream of a client lowered to country was still open 5 s after the reload")
        await fault.stop()
    }

    @Test("a reload that lowers a client to country: its open keep-alive connection and its new ones no longer get coordinates")
    func reloadRejudgesKeepAliveConnection() async throws {
        let config = SecurityConfig.base + Self.accessConfig("default_level: exact")
        let fault = try await FaultDaemon.start(config: config)
        let daemon = fault.daemon
        let kept = try await PeerConnection.open(daemon.socketPath, as: Self.reader)
        let before = try #require(await kept.request(HTTPText.get("/v1/attributes")), "no answer before the reload")
        try #require(before.document?.attributes["geo.location.lat"] != nil, "the exact client got no coordinates before the reload: \(before)")

        let outcome = try await daemon.reload(to: config + "  rules: [\"uid:\(Self.reader.uid)=country\"]\n")
        try #require(outcome?.contains("configuration reloaded") == true, "reload: \(outcome ?? "no outcome logged")")
        let after = await kept.request(HTTPText.get("/v1/attributes"), timeout: .seconds(5))
        if let after {
            #expect(!after.body.contains("geo.location.lat"), "the connection opened before the reload still gets coordinates: \(after)")
        } else {
            #expect(kept.closed, "the connection opened before the reload neither answered nor was closed")
        }
        let fresh = try await PeerConnection.open(daemon.socketPath, as: Self.reader)
        let answer = try #require(await fresh.request(HTTPText.get("/v1/attributes")), "a new connection got no answer")
        #expect(answer.status == 200 && answer.document?.precision == "country", "a new connection after the reload: \(answer)")
        #expect(!answer.body.contains("geo.location.lat"), "a new connection after the reload gets coordinates: \(answer)")
        await fault.stop()
    }

    @Test("a reload that revokes a client's mutate right: the next PUT /v1/state on its open connection is refused")
    func reloadRevokesMutateOnOpenConnection() async throws {
        let mutator = Peer(uid: 61002, gid: 61002)
        let config = SecurityConfig.base + Self.accessConfig("default_level: exact")
        let fault = try await FaultDaemon.start(config: config + "  mutate: [\"uid:\(mutator.uid)\"]\n")
        let daemon = fault.daemon
        let kept = try await PeerConnection.open(daemon.socketPath, as: mutator)
        let allowed = try #require(await kept.request(HTTPText.put("/v1/state", body: "background")), "no answer to the allowed PUT")
        try #require(allowed.status == 200, "the mutator's PUT before the reload: \(allowed)")
        #expect(await fault.status()?["state"] as? String == "background")

        let outcome = try await daemon.reload(to: config + "  mutate: []\n")
        try #require(outcome?.contains("configuration reloaded") == true, "reload: \(outcome ?? "no outcome logged")")
        let revoked = await kept.request(HTTPText.put("/v1/state", body: "foreground"), timeout: .seconds(5))
        if let revoked {
            #expect(revoked.status == 403, "a revoked mutate right still changes the state on the open connection: \(revoked)")
        } else {
            #expect(kept.closed, "the connection neither answered nor was closed")
        }
        let state = await fault.status()?["state"] as? String
        #expect(state == "background", "the state was changed to \(state ?? "-") by a client whose right was revoked")
        await fault.stop()
    }

    @Test("a reload that lowers outputs.level rewrites the output file at once, without waiting for a new fix")
    func reloadRewritesOutputFileAtNewLevel() async throws {
        let directory = try TemporaryDirectory(prefix: "geoattrd-sec")
        let envFile = directory.file("attrs.env")
        let config = SecurityConfig.base + "outputs:\n  env_file: \"\(envFile)\"\n"
        let fault = try await FaultDaemon.start(config: config + "  level: exact\n", directory: directory)
        let daemon = fault.daemon
        let exact = await eventually(timeout: .seconds(10)) { FileProbe.contents(envFile).contains("geo.location.lat") }
        try #require(exact, "the env file never held the exact position: \(FileProbe.contents(envFile))")
        let generation = try #require(await fault.served()?.generation)

        let outcome = try await daemon.reload(to: config + "  level: country\n")
        try #require(outcome?.contains("configuration reloaded") == true, "reload: \(outcome ?? "no outcome logged")")
        let lowered = await eventually(timeout: .seconds(5), interval: .milliseconds(50)) { !FileProbe.contents(envFile).contains("geo.location.lat") }
        #expect(lowered, "5 s after a reload to outputs.level country the env file still holds coordinates: \(FileProbe.contents(envFile))")
        #expect(await fault.served()?.generation == generation, "a new fix came meanwhile: the rewrite was not the reload's")
        await fault.stop()
    }

    @Test("a reload that changes a client's decimals changes its ETag: the old one gets 200, not 304")
    func reloadDecimalsChangeETag() async throws {
        let config = SecurityConfig.base + Self.accessConfig("default_level: exact")
        let fault = try await FaultDaemon.start(config: config + "  rules: [\"uid:\(Self.reader.uid)=locality/2\"]\n")
        let daemon = fault.daemon
        let first = try await PeerConnection.open(daemon.socketPath, as: Self.reader)
        let before = try #require(await first.request(HTTPText.get("/v1/attributes")), "no answer before the reload")
        let etag = try #require(before.header("etag"), "no ETag: \(before)")
        let generation = try #require(before.document?.generation)

        let outcome = try await daemon.reload(to: config + "  rules: [\"uid:\(Self.reader.uid)=locality/3\"]\n")
        try #require(outcome?.contains("configuration reloaded") == true, "reload: \(outcome ?? "no outcome logged")")
        let second = try await PeerConnection.open(daemon.socketPath, as: Self.reader)
        let after = try #require(await second.request(HTTPText.get("/v1/attributes", headers: [("if-none-match", etag)])), "no answer after the reload")
        #expect(after.status == 200, "If-None-Match \(etag) after the decimals changed from 2 to 3: \(after.status) (ETag \(after.header("etag") ?? "-"))")
        if let document = after.document {
            #expect(document.generation == generation, "a new fix came meanwhile: the test proves nothing")
            #expect(document.attributes["geo.location.lat"] == .double(47.377), "coordinates at 3 decimals: \(document.attributes)")
        }
        await fault.stop()
    }

    // MARK: Supplementary groups

    @Test("a gid rule matches a client's supplementary groups as well as its primary group")
    func gidRuleMatchesSupplementaryGroups() async throws {
        let (primary, ruled) = (UInt32(61101), UInt32(61102))
        let fault = try await FaultDaemon.start(
            config: SecurityConfig.base + Self.accessConfig("default_level: exact", "rules: [\"gid:\(ruled)=country\"]"))
        let socketPath = fault.daemon.socketPath
        let cases: [(Peer, Bool)] = [
            (Peer(uid: 61003, gid: primary, groups: [ruled]), false),
            (Peer(uid: 61004, gid: ruled, groups: [primary]), false),
            (Peer(uid: 61005, gid: primary), true),
        ]
        for (peer, seesCoordinates) in cases {
            let connection = try await PeerConnection.open(socketPath, as: peer)
            let answer = try #require(await connection.request(HTTPText.get("/v1/attributes")), "\(peer): no answer")
            #expect(answer.status == 200, "\(peer): \(answer)")
            #expect(
                answer.body.contains("geo.location.lat") == seesCoordinates,
                "\(peer) with the rule gid:\(ruled)=country: \(seesCoordinates ? "no coordinates" : "coordinates served"): \(answer)")
        }
        await fault.stop()
    }

    // MARK: Configuration fails closed

    /// Configurations with a mistake that must stop the daemon at start.
    enum ConfigMistake: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case hyphenatedKey
        case rulesAsMap
        case decimalsOnExactRule
        case outputDecimalsAtExact
        case misspelledEnvironmentVariable

        var testDescription: String { rawValue }

        var config: String {
            switch self {
            case .hyphenatedKey: SecurityConfig.base + "access:\n  default-level: none\n"
            case .rulesAsMap: SecurityConfig.base + "access:\n  rules:\n    uid:1001: country\n"
            case .decimalsOnExactRule: SecurityConfig.base + "access:\n  rules: [\"uid:1001=exact/2\"]\n"
            case .outputDecimalsAtExact: SecurityConfig.base + "outputs:\n  level: exact\n  decimals: 2\n"
            case .misspelledEnvironmentVariable: SecurityConfig.base
            }
        }

        var environment: [String: String] {
            self == .misspelledEnvironmentVariable ? ["GEOATTRD_ACCESS_DEFAULT_LEVL": "none"] : [:]
        }

        /// Text the error line must hold (case-insensitive).
        var named: [String] {
            switch self {
            case .hyphenatedKey: ["access.default-level", "access.default_level"]
            case .rulesAsMap: ["access.rules"]
            case .decimalsOnExactRule: ["access.rules"]
            case .outputDecimalsAtExact: ["outputs.decimals"]
            case .misspelledEnvironmentVariable: ["default_levl"]
            }
        }
    }

    @Test("a configuration mistake in access or outputs stops the daemon at start with exit 78, naming the key", arguments: ConfigMistake.allCases)
    func configurationMistakeFailsClosed(mistake: ConfigMistake) async throws {
        let (daemon, outcome) = try await DaemonProcess.launch(config: mistake.config, environment: mistake.environment)
        #expect(outcome == .exited(78), "geoattrd \(outcome): \(daemon.logTail(600))")
        if outcome == .exited(78) {
            let said = daemon.log.text.lowercased()
            for text in mistake.named {
                #expect(said.contains(text.lowercased()), "the error does not name \(text): \(daemon.logTail(600))")
            }
        }
        await daemon.stop(grace: .seconds(5))
    }

    @Test("SIGHUP with a typo in access: reload refused, a client mapped to country stays country")
    func reloadWithAccessTypoKeepsRunningConfiguration() async throws {
        let client = Peer(uid: 61006, gid: 61006)
        let fault = try await FaultDaemon.start(
            config: SecurityConfig.base + Self.accessConfig("default_level: exact", "rules: [\"uid:\(client.uid)=country\"]"))
        let daemon = fault.daemon
        let outcome = try await daemon.reload(to: SecurityConfig.base + Self.accessConfig("default_level: exact", "rule: [\"uid:\(client.uid)=country\"]"))
        #expect(outcome?.contains("reload refused") == true, "a configuration with access.rule (for rules) was \(outcome ?? "not reloaded nor refused")")
        let connection = try await PeerConnection.open(daemon.socketPath, as: client)
        let answer = try #require(await connection.request(HTTPText.get("/v1/attributes")), "no answer after the reload")
        #expect(answer.status == 200 && !answer.body.contains("geo.location.lat"), "the client mapped to country after a refused reload: \(answer)")
        await fault.stop()
    }

    // MARK: Connections per uid

    @Test("api.max_connections_per_uid: a uid's connection over the cap gets 503 too_many_connections; another uid is served")
    func perUIDConnectionCap() async throws {
        let (hog, other) = (Peer(uid: 61007, gid: 61007), Peer(uid: 61008, gid: 61008))
        let fault = try await FaultDaemon.start(config: SecurityConfig.base + "api:\n  max_connections_per_uid: 4\n")
        let socketPath = fault.daemon.socketPath
        var held: [PeerConnection] = []
        for index in 0..<4 {
            let connection = try await PeerConnection.open(socketPath, as: hog)
            let answer = await connection.request(HTTPText.get("/v1/attributes"))
            try #require(answer?.status == 200, "connection \(index + 1) of 4: \(answer.map(\.description) ?? "no answer")")
            held.append(connection)
        }
        let fifth = try await PeerConnection.open(socketPath, as: hog)
        let refused = await fifth.request(HTTPText.get("/v1/attributes"), timeout: .seconds(5))
        #expect(
            refused?.status == 503 && refused?.body.contains("too_many_connections") == true,
            "the 5th connection of one uid with a cap of 4: \(refused.map(\.description) ?? "no answer")")
        let served = try await PeerConnection.open(socketPath, as: other)
        let answer = await served.request(HTTPText.get("/v1/attributes"))
        #expect(answer?.status == 200, "another uid while the first is at its cap: \(answer.map(\.description) ?? "no answer")")
        for connection in held { connection.close() }
        await fault.stop()
    }

    // MARK: Low findings

    @Test("a restored cache whose generation is UInt64.max is set aside as corrupt; the daemon runs on and serves new fixes")
    func cacheWithMaximalGenerationSetAside() async throws {
        let directory = try TemporaryDirectory(prefix: "geoattrd-sec")
        let config = SecurityConfig.base + SecurityConfig.generousRefresh
        let cacheFile: String
        do {
            let first = try await FaultDaemon.start(config: config, directory: directory)
            cacheFile = first.daemon.cacheFile
            let written = await eventually(timeout: .seconds(10)) { FileProbe.cacheGeneration(cacheFile) != nil }
            try #require(written, "no cache written: \(first.daemon.logTail())")
            await first.stop()
        }
        // The generation alone edited, as text: a valid cache otherwise.
        var text = try String(contentsOfFile: cacheFile, encoding: .utf8)
        let key = "\"generation\":"
        let start = try #require(text.range(of: key), "no generation in \(text)")
        let digits = text[start.upperBound...].prefix { $0.isNumber }
        try #require(!digits.isEmpty && text.components(separatedBy: key).count == 2, "unexpected cache layout: \(text)")
        text.replaceSubrange(start.upperBound..<digits.endIndex, with: String(UInt64.max))
        try text.write(toFile: cacheFile, atomically: true, encoding: .utf8)
        try #require(FileProbe.cacheGeneration(cacheFile) == UInt64.max)

        let (daemon, outcome) = try await DaemonProcess.launch(config: config, directory: directory)
        #expect(outcome == .started, "geoattrd \(outcome) with a cache of generation UInt64.max: \(daemon.logTail())")
        #expect(FileProbe.kind(cacheFile + ".corrupt") == "regular file", "the cache was not moved to cache.json.corrupt")
        let client = GeoAttrClient(socketPath: daemon.socketPath, timeout: .seconds(10))
        let refreshed = try? await client.refresh(wait: .seconds(10))
        #expect(refreshed?.status == 200, "a forced fix got no answer")
        #expect(daemon.process.isRunning, "geoattrd died taking a new fix: \(daemon.logTail())")
        let served = try? await client.attributes()
        #expect(served.map { $0.generation < UInt64.max } == true, "served generation \(served.map { String($0.generation) } ?? "none")")
        await daemon.stop(grace: .seconds(5))
        withExtendedLifetime(directory) {}
    }

    @Test("the state file's content is never logged")
    func stateFileContentNotLogged() async throws {
        let directory = try TemporaryDirectory(prefix: "geoattrd-sec")
        _ = try directory.write("backgroundXYZSECRET\n", to: "state-file")
        let fault = try await FaultDaemon.start(config: SecurityConfig.base, directory: directory, waitForResult: false)
        let daemon = fault.daemon
        // And written in place while running.
        let mark = daemon.log.all.count
        let fd = open(daemon.stateFile, O_WRONLY | O_TRUNC | O_CLOEXEC)
        try #require(fd >= 0)
        let secret = Array("foregroundXYZSECRET\n".utf8)
        _ = secret.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        _ = await daemon.waitForLog("state file", from: mark, timeout: .seconds(3))
        // A valid state after it: the watcher has read the file since.
        try daemon.setState("background")
        let applied = await eventually(timeout: .seconds(10)) { await fault.status()?["state"] as? String == "background" }
        #expect(applied, "the state file watcher stopped working")
        await fault.stop()
        try await daemon.waitForLogEnd()
        let leaks = daemon.log.all.filter { $0.text.contains("XYZSECRET") }.map(\.text)
        #expect(leaks.isEmpty, "the state file's content was logged: \(leaks.prefix(2))")
    }

    @Test("api.idle_timeout_s governs idle keep-alive connections, not api.head_timeout_s")
    func idleTimeoutGovernsKeepAlive() async throws {
        let fault = try await FaultDaemon.start(config: SecurityConfig.base + "api:\n  head_timeout_s: 1\n  idle_timeout_s: 4\n")
        let socketPath = fault.daemon.socketPath
        let timeouts = #"geoattrd_requests_total{endpoint="invalid",status="408"}"#
        let before = try await Metrics.value(fault.client, timeouts) ?? 0
        let connection = try await PeerConnection.open(socketPath, as: Self.reader)
        let first = await connection.request(HTTPText.get("/v1/attributes"))
        try #require(first?.status == 200, "first request: \(first.map(\.description) ?? "no answer")")
        // Idle longer than the head timeout, shorter than the idle timeout.
        try await Task.sleep(for: .milliseconds(2_500))
        let second = await connection.request(HTTPText.get("/v1/attributes"), timeout: .seconds(5))
        #expect(
            second?.status == 200,
            "a keep-alive connection idle 2.5 s (idle timeout 4 s, head timeout 1 s): \(second.map(\.description) ?? (connection.closed ? "closed" : "no answer"))")
        if second != nil {
            let answered = ContinuousClock.now
            let closed = await connection.waitForEnd(timeout: .seconds(8))
            let after = ContinuousClock.now - answered
            #expect(
                closed && after >= .seconds(3) && after < .seconds(6),
                "idle connection \(closed ? "closed after \(after)" : "still open after 8 s") (idle timeout 4 s)")
        }
        let counted = try await Metrics.value(fault.client, timeouts) ?? 0
        #expect(counted == before, "an idle keep-alive connection was counted as a 408 (\(before) -> \(counted))")
        await fault.stop()
    }

    @Test("SIGTERM while POST /v1/refresh?wait=30 waits on a silent gpsd: a complete 503 shutting_down, and no NIO shutdown warning")
    func sigtermAnswersWaitingRefresh() async throws {
        let gpsd = try SilentTCPListener()
        let fault = try await FaultDaemon.start(
            config: FaultConfig.gpsd(gpsd.endpoint, ttl: 3600, timeout: 60) + "socket:\n  mode: \"0666\"\n", waitForResult: false)
        let daemon = fault.daemon
        let inFlight = await eventually(timeout: .seconds(10)) { await fault.status()?["fix_in_flight"] as? Bool == true }
        try #require(inFlight, "no fix in flight against the silent gpsd: \(daemon.logTail())")
        let mark = daemon.log.all.count
        let connection = try RawUnixConnection(path: daemon.socketPath)
        connection.send(HTTPText.post("/v1/refresh?wait=30"))
        let waiting = await daemon.log.waitForLine(from: mark, timeout: .seconds(10)) {
            $0.contains("joins the fix in flight") || $0.contains("refresh accepted")
        }
        try #require(waiting != nil, "the refresh never reached the scheduler: \(daemon.logTail())")
        daemon.signal(SIGTERM)
        let answer = await connection.read(timeout: .seconds(10))
        #expect(
            answer.text.hasPrefix("HTTP/1.1 503") && answer.text.contains("shutting_down"),
            "the waiting refresh got \(answer.text.isEmpty ? "an empty reply" : answer.text.prefix(300).debugDescription)")
        let status = await daemon.process.waitAsync(timeout: .seconds(15))
        #expect(status == 0, "exit \(status.map(String.init) ?? "none within 15 s")")
        try await daemon.waitForLogEnd()
        let warnings = daemon.log.all.filter { $0.text.contains("already shut down") }.map(\.text)
        #expect(warnings.isEmpty, "\(warnings.prefix(2))")
        await daemon.stop(grace: .seconds(2))
        withExtendedLifetime(gpsd) {}
    }

    @Test("at the default log level a fix's coordinates stay out of the log")
    func coordinatesNotLoggedAtInfo() async throws {
        let fault = try await FaultDaemon.start(config: SecurityConfig.base)
        let daemon = fault.daemon
        try await daemon.waitForGeneration(timeout: .seconds(10))
        await fault.stop()
        // All of the log, the fix's line in it: none of its lines has the coordinates.
        try await daemon.waitForLogEnd()
        #expect(daemon.count("fix accepted") > 0, "the fix was not logged: \(daemon.logTail())")
        let leaks = daemon.log.all.filter { $0.text.contains("47.3769") || $0.text.contains("8.5417") }.map(\.text)
        #expect(leaks.isEmpty, "coordinates in the info log: \(leaks.prefix(2))")
    }
}
