import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A real gpsd fed by gpsfake from an NMEA log the test generated.
///
/// Each instance has its own port and TMPDIR (gpsd's control socket lives there), runs in its
/// own session and is killed with its whole process group when stopped or released. gpsfake
/// runs in pipe mode (`-p`): its own watcher makes gpsd read the log at once, it exits by itself
/// at the end of the log, and its standard output is everything gpsd emitted.
public final class GPSFake: Sendable {
    public struct StartError: Error, CustomStringConvertible {
        public var description: String
    }

    public let port: UInt16
    public let directory: TemporaryDirectory
    public let process: ChildProcess
    /// gpsfake's and gpsd's standard error, line by line with arrival times.
    public let log: LineRecorder

    public var endpoint: String { "127.0.0.1:\(port)" }

    /// Starts gpsfake on `nmea`. `cycle` is the delay between sentences; `gpsdDebugLevel`
    /// passes `-D N` to gpsd (level 4 logs every client exchange); `port` makes gpsd listen on
    /// that port instead of a free one (a gpsd that appears, or comes back, where a client
    /// already looks for it).
    public init(
        nmea: String,
        cycle: Double = 0.05,
        once: Bool = true,
        gpsdDebugLevel: Int? = nil,
        port fixedPort: UInt16? = nil,
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
            if fixedPort != nil, attempt > 0 {
                // The previous gpsd on that port may still be letting go of it.
                try await Task.sleep(for: .milliseconds(500))
            }
            let port = try fixedPort ?? Loopback.freePort()
            var arguments = ["-p", "-q", "-P", String(port), "-c", String(cycle)]
            if once { arguments.append("-1") }
            if let gpsdDebugLevel { arguments += ["-D", String(gpsdDebugLevel)] }
            arguments.append(logPath)
            var environment = ProcessInfo.processInfo.environment
            environment["TMPDIR"] = directory.path
            let log = try LineRecorder()
            let process = try ChildProcess(
                executable: "gpsfake",
                arguments: arguments,
                environment: environment,
                stdoutPath: directory.file("gpsfake.out"),
                stderrFD: log.writeFD
            )
            log.closeWriteEnd()
            if await Self.waitUntilListening(port: port, process: process, log: log, timeout: readyTimeout) {
                self.port = port
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

    private static func waitUntilListening(port: UInt16, process: ChildProcess, log: LineRecorder, timeout: Duration) async -> Bool {
        var failed = false
        let listening = await eventually(timeout: timeout, interval: .milliseconds(20)) {
            if Loopback.accepts(port: port) { return true }
            failed = !process.isRunning || log.text.contains("Address already in use")
            return failed
        }
        return listening && !failed
    }

    /// Runs `body` with a started gpsfake and stops it afterwards, also when `body` throws.
    public static func run<T>(
        nmea: String,
        cycle: Double = 0.05,
        once: Bool = true,
        gpsdDebugLevel: Int? = nil,
        port: UInt16? = nil,
        _ body: (GPSFake) async throws -> T
    ) async throws -> T {
        let gpsfake = try await GPSFake(nmea: nmea, cycle: cycle, once: once, gpsdDebugLevel: gpsdDebugLevel, port: port)
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
    public func clientUnderTest(from start: Int = 0, timeout: Duration = .seconds(20)) async -> Client? {
        let marker = "?WATCH={\"enable\":true,\"json\":true}"
        guard let line = await log.waitForLine(from: start, timeout: timeout, where: { $0.contains(marker) }),
            let open = line.text.range(of: "client("),
            let close = line.text[open.upperBound...].firstIndex(of: ")"),
            let number = Int(line.text[open.upperBound..<close])
        else { return nil }
        return Client(number: number, watchLine: line)
    }

    /// Waits for gpsd to log that `client` hung up ("eof read", a failed write when the client
    /// closed before gpsd answered its last request, or the detach itself), and returns that line.
    public func waitForDisconnect(of client: Client, timeout: Duration = .seconds(20)) async -> LineRecorder.Line? {
        await log.waitForLine(from: client.watchLine.index, timeout: timeout) {
            $0.contains("client(\(client.number)): eof read") || $0.contains("client(\(client.number)) write:")
                || $0.contains("detaching") && $0.contains("(sub \(client.number),")
        }
    }
}
