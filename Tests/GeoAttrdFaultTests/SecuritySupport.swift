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

/// The credentials of an untrusted local client: what SO_PEERCRED (uid, primary gid) and
/// SO_PEERGROUPS (supplementary groups) report for its connections. The uids and gids need not
/// exist in /etc/passwd.
struct Peer: Sendable, CustomStringConvertible {
    var uid: UInt32
    var gid: UInt32
    var groups: [UInt32] = []

    var description: String {
        "uid \(uid) gid \(gid) groups [\(groups.map(String.init).joined(separator: ","))]"
    }
}

extension RawHTTPResponse {
    /// The body as an attributes document, when it is one.
    var document: AttributesDocument? {
        try? JSONDecoder().decode(AttributesDocument.self, from: Data(body.utf8))
    }
}

/// A connection to the daemon's socket made by another uid, gid and groups, driven from the
/// test: the connect() is done by a child process under `setpriv` (python3's socket module on
/// a socket the test created and handed down as the child's standard error), so the daemon's
/// peer credentials are the child's, while the test reads and writes the connection itself.
final class PeerConnection {
    /// The connection itself; closed with this object.
    private let connection: RawUnixConnection
    var fd: Int32 { connection.fd }
    let peer: Peer
    private var pending: [UInt8] = []
    /// The daemon closed the connection (EOF or an error on read).
    private(set) var closed = false

    /// Connects the socket on fd 2 (the test's, handed down) to argv[1]; what failed on stdout.
    private static let connectScript = """
        import socket, sys
        try:
            s = socket.socket(fileno=2)
            s.connect(sys.argv[1])
            s.detach()
        except Exception as e:
            print(repr(e), flush=True)
            sys.exit(1)
        """

    private init(fd: Int32, peer: Peer) {
        connection = RawUnixConnection(adopting: fd)
        self.peer = peer
    }

    /// Opens a connection to `socketPath` with `peer`'s credentials.
    static func open(_ socketPath: String, as peer: Peer) async throws -> PeerConnection {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw FaultInjectionError(description: "socket(AF_UNIX) failed: errno \(errno)") }
        let scratch: TemporaryDirectory
        let child: ChildProcess
        do {
            scratch = try TemporaryDirectory(prefix: "peer")
            let groups = peer.groups.isEmpty ? "--clear-groups" : "--groups=" + peer.groups.map(String.init).joined(separator: ",")
            child = try ChildProcess(
                executable: "setpriv",
                arguments: ["--reuid=\(peer.uid)", "--regid=\(peer.gid)", groups, "/usr/bin/python3", "-I", "-c", connectScript, socketPath],
                stdoutPath: scratch.file("out"), stderrFD: fd)
        } catch {
            Glibc.close(fd)
            throw error
        }
        let status = await child.waitAsync(timeout: .seconds(15))
        guard status == 0 else {
            Glibc.close(fd)
            let said = (try? String(contentsOfFile: scratch.file("out"), encoding: .utf8)) ?? ""
            throw FaultInjectionError(
                description: "connecting as \(peer) to \(socketPath) failed (status \(status.map(String.init) ?? "timed out")): \(said)")
        }
        return PeerConnection(fd: fd, peer: peer)
    }

    /// Sends everything; `false` if the daemon closed the connection.
    @discardableResult
    func send(_ text: String) -> Bool { connection.send(text) }

    /// Everything received and not yet taken as a response.
    var received: String { String(decoding: pending, as: UTF8.self) }

    /// Reads what is there; waits up to 50 ms for something when nothing is (the callers check
    /// their own deadlines between calls). Sets `closed` on EOF.
    private func fill() async {
        guard await connection.wait(for: Int32(POLLIN), timeout: .milliseconds(50)) != 0 else { return }
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let n = recv(fd, &buffer, buffer.count, 0)
        if n <= 0 {
            closed = true
        } else {
            pending += buffer[0..<n]
        }
    }

    /// The next complete response, `nil` if the connection closed or `timeout` passed first
    /// (see `closed`).
    func response(timeout: Duration = .seconds(10)) async -> RawHTTPResponse? {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let reply = takeResponse() { return reply }
            if closed || ContinuousClock.now >= deadline { return nil }
            await fill()
        }
    }

    /// Sends `request` and reads its response.
    func request(_ request: String, timeout: Duration = .seconds(10)) async -> RawHTTPResponse? {
        _ = send(request)
        return await response(timeout: timeout)
    }

    /// Reads until `marker` has been received, the connection closes or `timeout` passes;
    /// whether the marker came.
    func read(until marker: String, timeout: Duration = .seconds(10)) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while !received.contains(marker) {
            if closed || ContinuousClock.now >= deadline { return false }
            await fill()
        }
        return true
    }

    /// Waits until the daemon closes the connection or ends its chunked body (the zero-length
    /// last chunk); whether it did within `timeout`.
    func waitForEnd(timeout: Duration) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while true {
            if closed || received.contains("\r\n0\r\n\r\n") { return true }
            if ContinuousClock.now >= deadline { return false }
            await fill()
        }
    }

    private func takeResponse() -> RawHTTPResponse? {
        guard let next = RawHTTPResponse.first(in: pending[...], receivedAll: closed) else { return nil }
        pending.removeFirst(next.byteCount)
        return next.response
    }

    func close() {
        Glibc.shutdown(fd, Int32(SHUT_RDWR))
    }
}

/// Requests as raw HTTP/1.1 text (keep-alive unless said otherwise).
enum HTTPText {
    static func get(_ path: String, headers: [(String, String)] = []) -> String {
        "GET \(path) HTTP/1.1\r\nhost: geoattrd\r\n" + headers.map { "\($0.0): \($0.1)\r\n" }.joined() + "\r\n"
    }

    static func put(_ path: String, body: String) -> String {
        "PUT \(path) HTTP/1.1\r\nhost: geoattrd\r\ncontent-length: \(body.utf8.count)\r\n\r\n\(body)"
    }

    static func post(_ path: String) -> String {
        "POST \(path) HTTP/1.1\r\nhost: geoattrd\r\ncontent-length: 0\r\n\r\n"
    }
}

/// Configuration fragments of the security scenarios.
enum SecurityConfig {
    /// The static location, and a socket every local uid may open (the scenarios' untrusted
    /// clients connect with uids of their own).
    static let base = FaultConfig.staticLocation + "socket:\n  mode: \"0666\"\n"
    /// Forced fixes as often as a scenario asks.
    static let generousRefresh = "refresh:\n  burst: 1000\n  interval_s: 0.001\n"
}

/// How a start of geoattrd ended up.
enum LaunchOutcome: Equatable, CustomStringConvertible {
    /// It logged "scheduler started" and runs.
    case started
    case exited(Int32)
    /// Neither within the time allowed.
    case undecided

    var description: String {
        switch self {
        case .started: "started"
        case .exited(let status): "exited with status \(status)"
        case .undecided: "neither started nor exited"
        }
    }
}

extension DaemonProcess {
    /// Starts the release geoattrd and waits until it has either started its scheduler or
    /// exited (a start that must fail, or that the code under test lets fail).
    static func launch(
        config: String, arguments: [String] = [], environment: [String: String] = [:], directory: TemporaryDirectory? = nil,
        timeout: Duration = .seconds(20), sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> (DaemonProcess, LaunchOutcome) {
        try #require(ReleaseBinary.isBuilt, "no release build at \(ReleaseBinary.geoattrd): run scripts/fault-suite.sh", sourceLocation: sourceLocation)
        let daemon = try DaemonProcess(
            config: config, arguments: arguments, directory: directory, environment: environment, executable: ReleaseBinary.geoattrd)
        _ = await eventually(timeout: timeout, interval: .milliseconds(20)) {
            daemon.count("scheduler started") > 0 || !daemon.process.isRunning
        }
        if let status = daemon.process.reap() { return (daemon, .exited(status)) }
        return (daemon, daemon.count("scheduler started") > 0 ? .started : .undecided)
    }

    /// Replaces the configuration file (by rename: a regular file) and sends SIGHUP; the log
    /// line that says how the reload ended ("configuration reloaded" or "reload refused").
    func reload(to config: String, timeout: Duration = .seconds(10)) async throws -> String? {
        try config.write(toFile: configFile, atomically: true, encoding: .utf8)
        let mark = log.all.count
        signal(SIGHUP)
        let line = await log.waitForLine(from: mark, timeout: timeout) {
            $0.contains("configuration reloaded") || $0.contains("reload refused")
        }
        return line?.text
    }

    /// The log's last `count` characters, for failure messages.
    func logTail(_ count: Int = 2_000) -> String { String(log.text.suffix(count)) }
}

/// A file outside the daemon's directories that a planted link points at: it must keep its
/// content, mode and inode whatever the daemon writes.
struct Victim {
    let path: String
    let content: String
    let mode: mode_t
    let inode: UInt64

    init(path: String, content: String = "precious: not the daemon's to touch\n", mode: mode_t = 0o600) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard fd >= 0 else { throw FaultInjectionError(description: "creating \(path): errno \(errno)") }
        let bytes = Array(content.utf8)
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        _ = fchmod(fd, mode)
        var info = stat()
        _ = fstat(fd, &info)
        close(fd)
        guard written == bytes.count else { throw FaultInjectionError(description: "writing \(path) failed") }
        self.path = path
        self.content = content
        self.mode = mode
        inode = UInt64(info.st_ino)
    }

    /// What changed about the file, `nil` if nothing did.
    var damage: String? {
        var info = stat()
        guard lstat(path, &info) == 0 else { return "\(path) is gone" }
        var problems: [String] = []
        if (info.st_mode & S_IFMT) != S_IFREG { problems.append("no longer a regular file") }
        if UInt64(info.st_ino) != inode { problems.append("replaced (inode \(inode) -> \(info.st_ino))") }
        if info.st_mode & 0o7777 != mode {
            problems.append("mode 0\(String(mode, radix: 8)) -> 0\(String(info.st_mode & 0o7777, radix: 8))")
        }
        let now = (try? String(contentsOfFile: path, encoding: .utf8)) ?? "<unreadable>"
        if now != content { problems.append("content now \(now.prefix(120).debugDescription)") }
        return problems.isEmpty ? nil : "\(path): " + problems.joined(separator: "; ")
    }
}

/// Small file-system probes.
enum FileProbe {
    /// The cache file's result.generation, `nil` when absent or unreadable.
    static func cacheGeneration(_ path: String) -> UInt64? {
        guard let data = FileManager.default.contents(atPath: path),
              let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let result = object["result"] as? [String: Any],
              let generation = result["generation"] as? NSNumber
        else { return nil }
        return generation.uint64Value
    }

    /// The inode of what `path` resolves to (following links), `nil` when it does not exist.
    static func inode(_ path: String) -> UInt64? {
        var info = stat()
        return stat(path, &info) == 0 ? UInt64(info.st_ino) : nil
    }

    /// The file type of `path` itself (not following a link): "regular file", "symbolic link", ...
    static func kind(_ path: String) -> String {
        var info = stat()
        guard lstat(path, &info) == 0 else { return "absent" }
        switch info.st_mode & S_IFMT {
        case S_IFREG: return "regular file"
        case S_IFLNK: return "symbolic link"
        case S_IFIFO: return "FIFO"
        case S_IFDIR: return "directory"
        default: return "other"
        }
    }

    static func contents(_ path: String) -> String {
        (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
    }
}

/// A TCP listener on 127.0.0.1 that never accepts and never answers: a gpsd that takes the
/// connection and then delivers nothing (the kernel completes the handshakes).
final class SilentTCPListener {
    let fd: Int32
    let port: UInt16

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw FaultInjectionError(description: "socket(AF_INET) failed") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                bind(fd, raw, length) == 0 && listen(fd, 16) == 0 && getsockname(fd, raw, &length) == 0
            }
        }
        guard bound else {
            Glibc.close(fd)
            throw FaultInjectionError(description: "binding a silent listener failed: errno \(errno)")
        }
        self.fd = fd
        port = UInt16(bigEndian: address.sin_port)
    }

    var endpoint: String { "127.0.0.1:\(port)" }

    deinit {
        Glibc.close(fd)
    }
}
