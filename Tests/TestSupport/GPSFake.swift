import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A real gpsd fed by gpsfake from an NMEA log the test generated.
///
/// Each instance has its own port and TMPDIR (gpsd's control socket lives there), runs in its
/// own session and is killed with its whole process group when stopped or released. gpsfake
/// runs in pipe mode (`-p`): its own watcher makes gpsd read the log at once, it exits by itself
/// at the end of the log, and its standard output is everything gpsd emitted.
///
/// The command is `gpsfake` from the PATH, or the one in GEOATTRD_GPSFAKE (words separated by
/// spaces; gpsfake's arguments follow them): a launcher that runs another release's gpsfake and
/// gpsd must `exec` it, so that the process and its group are gpsfake's. GEOATTRD_GPSD_RELEASE,
/// when set, is the gpsd release every start must meet (a run meant for another gpsd that
/// quietly used the host's would prove nothing).
public final class GPSFake: Sendable {
    /// The variable that names the gpsfake command.
    public static let commandVariable = "GEOATTRD_GPSFAKE"
    /// The variable that names the gpsd release the tests expect ("3.25").
    public static let releaseVariable = "GEOATTRD_GPSD_RELEASE"

    /// The gpsfake command: GEOATTRD_GPSFAKE split on spaces, else `gpsfake`.
    public static var command: [String] {
        let words = (ProcessInfo.processInfo.environment[commandVariable] ?? "").split(separator: " ").map(String.init)
        return words.isEmpty ? ["gpsfake"] : words
    }

    public struct StartError: Error, CustomStringConvertible {
        public var description: String
    }

    public let port: UInt16
    /// gpsd's release, from the VERSION object it greets each client with ("3.22", "3.25").
    public let gpsdRelease: String
    public let directory: TemporaryDirectory
    public let process: ChildProcess
    /// gpsfake's and gpsd's standard error, line by line with arrival times.
    public let log: LineRecorder

    public var endpoint: String { "127.0.0.1:\(port)" }

    /// Starts gpsfake on `nmea`. `cycle` is the delay between sentences; `gpsdDebugLevel`
    /// passes `-D N` to gpsd (level 4 logs every client exchange); `port` makes gpsd listen on
    /// that port instead of a free one (a gpsd that appears, or comes back, where a client
    /// already looks for it). `udp` feeds gpsd over UDP instead of a pseudo-terminal: gpsd then
    /// names the device `udp://...`, as it would a network receiver, not `/dev/pts/N`.
    public init(
        nmea: String,
        cycle: Double = 0.05,
        once: Bool = true,
        gpsdDebugLevel: Int? = nil,
        port fixedPort: UInt16? = nil,
        udp: Bool = false,
        readyTimeout: Duration = .seconds(20)
    ) async throws {
        let directory = try TemporaryDirectory(prefix: "gpsfake")
        let logPath = try directory.write(nmea, to: "track.nmea")
        var failures: [String] = []
        if let fixedPort {
            // A gpsd still going away on that port would pass for the new one being ready.
            _ = await eventually(timeout: readyTimeout, interval: .milliseconds(20)) { !Loopback.accepts(port: fixedPort) }
        }
        // A port can still be taken between the check and gpsd's bind: try another one.
        for attempt in 0..<3 {
            if let fixedPort, attempt > 0 {
                // The previous gpsd on that port may still be letting go of it.
                _ = await eventually(timeout: readyTimeout, interval: .milliseconds(20)) { Loopback.isBindable(fixedPort) }
            }
            let port = try fixedPort ?? Loopback.freePort()
            // Slower when the code under test is (TestTiming): each phase of a track lasts as long for it.
            var arguments = ["-p", "-q", "-P", String(port), "-c", String(cycle * TestTiming.scale)]
            if once { arguments.append("-1") }
            if udp { arguments.append("-u") }
            if let gpsdDebugLevel { arguments += ["-D", String(gpsdDebugLevel)] }
            arguments.append(logPath)
            var environment = ProcessInfo.processInfo.environment
            environment["TMPDIR"] = directory.path
            let log = try LineRecorder()
            let command = Self.command
            let process = try ChildProcess(
                executable: command[0],
                arguments: command.dropFirst() + arguments,
                environment: environment,
                stdoutPath: directory.file("gpsfake.out"),
                stderrFD: log.writeFD
            )
            log.closeWriteEnd()
            if let release = await Self.waitUntilListening(port: port, process: process, log: log, timeout: readyTimeout) {
                if let expected = ProcessInfo.processInfo.environment[Self.releaseVariable], !expected.isEmpty, release != expected {
                    process.signalGroup(SIGKILL)
                    await process.waitAsync(timeout: .seconds(5))
                    throw StartError(description: "gpsd \(release) answered (\(command.joined(separator: " "))); \(Self.releaseVariable) asks for \(expected)")
                }
                self.port = port
                self.gpsdRelease = release
                self.directory = directory
                self.process = process
                self.log = log
                return
            }
            process.signalGroup(SIGKILL)
            await process.waitAsync(timeout: .seconds(5))
            failures.append("port \(port): \(log.text.suffix(600))")
        }
        throw StartError(description: "gpsfake did not start listening: \(failures.joined(separator: "\n"))")
    }

    /// Ready once gpsfake's own watcher is connected to gpsd and gpsd has gpsfake's device.
    /// gpsfake only waits for gpsd's control socket file to exist, then adds its device through
    /// that socket and connects its watcher to the TCP port; on a loaded machine gpsd may not be
    /// listening on either yet. A refused watcher makes gpsfake give up ("socket error [Errno
    /// 111]") while the gpsd it started may keep listening with no receiver behind it; a refused
    /// control connection is ignored by gpsfake, and gpsd then has no device at all. Either way a
    /// listening port alone would pass for ready: such a start fails here (the latter only at
    /// `timeout`: a device may also just not be added yet) and is retried. Returns gpsd's
    /// release once ready, `nil` otherwise.
    private static func waitUntilListening(port: UInt16, process: ChildProcess, log: LineRecorder, timeout: Duration) async -> String? {
        var failed = false
        var release: String?
        let ready = await eventually(timeout: timeout, interval: .milliseconds(20)) {
            // gpsfake adds its device, and waits for gpsd's answer, before it connects its watcher.
            if Loopback.hasEstablishedClient(port: port), let answer = gpsdListsADevice(port: port), answer.hasDevice {
                release = answer.release
                return true
            }
            failed = !process.isRunning || log.text.contains("Address already in use") || log.text.contains("socket error")
            return failed
        }
        return ready && !failed ? release : nil
    }

    /// Asks gpsd on `port` for its devices (`?DEVICES;`): whether it answers, within a second,
    /// with at least one, and the release its VERSION greeting named.
    private static func gpsdListsADevice(port: UInt16) -> (hasDevice: Bool, release: String)? {
        var answer: Bool?
        var release = "unknown"
        _ = Loopback.withLoopbackSocket(port: port) { fd, address, length in
            let request = Array("?DEVICES;\n".utf8)
            guard connect(fd, address, length) == 0, write(fd, request, request.count) == request.count else { return false }
            var received: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            let deadline = ContinuousClock.now + .seconds(1)
            while answer == nil, ContinuousClock.now < deadline {
                var ready = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                guard poll(&ready, 1, 100) >= 0 else { return false }
                guard ready.revents != 0 else { continue }
                let n = read(fd, &buffer, buffer.count)
                guard n > 0 else { return false }
                received += buffer[..<n]
                // Complete lines only (split as bytes: "\r\n" is one Character): {"class":"DEVICES","devices":[...]}
                let lines = received.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).dropLast().map { String(decoding: $0, as: UTF8.self) }
                if let version = lines.first(where: { $0.contains(#""class":"VERSION""#) }) {
                    release = Self.release(inVersion: version) ?? release
                }
                if let devices = lines.first(where: { $0.contains(#""class":"DEVICES""#) }) {
                    answer = devices.contains(#""path":"#)
                }
            }
            return true
        }
        return answer.map { ($0, release) }
    }

    /// The `release` of a VERSION object: `{"class":"VERSION","release":"3.25",...}`.
    static func release(inVersion line: String) -> String? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { return nil }
        return object["release"] as? String
    }

    /// Whether gpsd is release `major.minor` or later (releases compare numerically: 3.25 > 3.3).
    public func gpsdIsAtLeast(_ major: Int, _ minor: Int) -> Bool {
        let parts = gpsdRelease.split(separator: ".").map { Int($0.prefix { $0.isNumber }) ?? 0 }
        return (parts.first ?? 0, parts.dropFirst().first ?? 0) >= (major, minor)
    }

    /// Runs `body` with a started gpsfake and stops it afterwards, also when `body` throws.
    public static func run<T>(
        nmea: String,
        cycle: Double = 0.05,
        once: Bool = true,
        gpsdDebugLevel: Int? = nil,
        port: UInt16? = nil,
        udp: Bool = false,
        _ body: (GPSFake) async throws -> T
    ) async throws -> T {
        let gpsfake = try await GPSFake(nmea: nmea, cycle: cycle, once: once, gpsdDebugLevel: gpsdDebugLevel, port: port, udp: udp)
        do {
            let result = try await body(gpsfake)
            await gpsfake.stop()
            return result
        } catch {
            await gpsfake.stop()
            throw error
        }
    }

    /// Stops gpsfake and gpsd (the whole process group) and reaps gpsfake, without blocking a
    /// concurrency thread: SIGTERM lets gpsfake reap its gpsd; a group that ignores it is killed.
    public func stop() async {
        process.signalGroup(SIGTERM)
        if await process.waitAsync(timeout: .seconds(2)) == nil {
            process.signalGroup(SIGKILL)
            await process.waitAsync(timeout: .seconds(5))
        }
        process.signalGroup(SIGKILL)
    }

    /// A client of gpsd as its debug log (level 4) names it. gpsd reuses numbers, so the
    /// client's lines are those after `watchLine`.
    public struct Client: Sendable {
        public var number: Int
        public var watchLine: LineRecorder.Line
    }

    /// The next client, from line `start` on, that sent the daemon's watch request (gpsfake's own
    /// watcher asks for NMEA too).
    public func clientUnderTest(from start: Int = 0, timeout: Duration = .seconds(20 * TestTiming.scale)) async -> Client? {
        let marker = "?WATCH={\"enable\":true,\"json\":true}"
        guard let line = await log.waitForLine(from: start, timeout: timeout, where: { $0.contains(marker) }),
            let open = line.text.range(of: "client("),
            let close = line.text[open.upperBound...].firstIndex(of: ")"),
            let number = Int(line.text[open.upperBound..<close])
        else { return nil }
        return Client(number: number, watchLine: line)
    }

    /// The TPV reports gpsd sent to `client` (from its watch request on; gpsd's debug level 4).
    public func reportsSent(to client: Client) -> [String] {
        log.all.dropFirst(client.watchLine.index).map(\.text).filter {
            Self.textSent(to: client, in: $0)?.hasPrefix("{\"class\":\"TPV\"") == true
        }
    }

    /// What a debug line (level 4) says gpsd wrote to `client`, or `nil` for any other line.
    /// gpsd 3.22 logs `=> client(N): TEXT`, gpsd 3.25 `=> client(N) len L: TEXT`.
    public static func textSent(to client: Client, in line: String) -> Substring? {
        guard let marker = line.range(of: "=> client(\(client.number))") else { return nil }
        var rest = line[marker.upperBound...]
        if rest.hasPrefix(" len ") {
            rest = rest.dropFirst(5).drop { $0.isNumber }
        }
        guard rest.hasPrefix(": ") else { return nil }
        return rest.dropFirst(2)
    }

    /// Waits for gpsd to log that `client` hung up ("eof read", a failed write when the client
    /// closed before gpsd answered its last request, or the detach itself), and returns that line.
    public func waitForDisconnect(of client: Client, timeout: Duration = .seconds(20 * TestTiming.scale)) async -> LineRecorder.Line? {
        await log.waitForLine(from: client.watchLine.index, timeout: timeout) {
            $0.contains("client(\(client.number)): eof read") || $0.contains("client(\(client.number)) write:")
                || $0.contains("detaching") && $0.contains("(sub \(client.number),")
        }
    }
}
