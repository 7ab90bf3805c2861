@preconcurrency import Dispatch
import GeoAttrCore
import GeoAttrModel
import Logging
import ServiceLifecycle
import UnixSignals

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The daemon's signals, each with one owner: `SIGUSR1` forces a refresh, `SIGHUP` reloads the
/// configuration, `SIGTSTP` means background and `SIGCONT` foreground. (SIGTERM and SIGINT
/// belong to the service group: graceful shutdown.)
struct SignalService: Service {
    let scheduler: Scheduler
    let reload: @Sendable () async -> Void
    let logger: Logger
    let signals: UnixSignalsSequence
    let terminalStops: TerminalStopSignals

    /// Traps the signals at once, so that none arriving during start-up takes its default
    /// action (SIGUSR1 and SIGHUP would end the process, SIGTSTP stop it).
    static func make(scheduler: Scheduler, logger: Logger, reload: @escaping @Sendable () async -> Void) async -> SignalService {
        SignalService(
            scheduler: scheduler, reload: reload, logger: logger,
            signals: await UnixSignalsSequence(trapping: .sigusr1, .sighup, .sigcont),
            terminalStops: TerminalStopSignals())
    }

    func run() async {
        await withDiscardingTaskGroup { group in
            group.addTask {
                for await signal in signals.cancelOnGracefulShutdown() {
                    switch signal {
                    case .sigusr1:
                        _ = await scheduler.requestRefresh(origin: "SIGUSR1")
                    case .sighup:
                        logger.info("SIGHUP: reloading the configuration")
                        await reload()
                    case .sigcont:
                        scheduler.setPowerState(.foreground, origin: "SIGCONT")
                    default:
                        break
                    }
                }
            }
            group.addTask {
                for await _ in terminalStops.stream.cancelOnGracefulShutdown() {
                    scheduler.setPowerState(.background, origin: "SIGTSTP")
                }
            }
        }
        terminalStops.cancel()
    }
}

/// SIGTSTP as an async sequence. `UnixSignal` has no SIGTSTP, so this is the one signal trapped
/// here, the same way UnixSignalsSequence does it on Linux: a dispatch signal source, which
/// replaces the default action (stopping the process). `@unchecked`: the source is set once in
/// `init`, and dispatch sources are thread-safe.
final class TerminalStopSignals: @unchecked Sendable {
    let stream: AsyncStream<Void>
    private let source: any DispatchSourceSignal

    init() {
        let (stream, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        self.stream = stream
        source = DispatchSource.makeSignalSource(signal: SIGTSTP, queue: DispatchQueue(label: "geoattrd.sigtstp"))
        source.setEventHandler { continuation.yield() }
        source.setCancelHandler { continuation.finish() }
        source.resume()
    }

    func cancel() {
        source.cancel()
    }
}
