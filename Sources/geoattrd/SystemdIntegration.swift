import GeoAttrCore
import GeoAttrModel
import GeoAttrSystemd
import Logging
import ServiceLifecycle

/// Tells systemd what the daemon is doing: STATUS= on every new result and every change between
/// foreground and background, WATCHDOG=1 every half
/// interval (through the scheduler's actor, so a wedged main loop stops the pings), and
/// STOPPING=1 when the graceful shutdown begins. READY=1 and RELOADING=1 are sent by the daemon
/// where they happen.
struct SystemdIntegration: Service {
    let notifier: SystemdNotifier
    let scheduler: Scheduler
    let store: AttributeReader
    let logger: Logger

    static func statusLine(_ store: AttributeReader) -> String {
        let status = store.status
        var parts = [status.scheduler.powerState.rawValue]
        if let served = store.served {
            parts.append("last fix \(served.age().components.seconds) s ago (\(served.result.source.rawValue))")
        } else {
            parts.append("no location yet")
        }
        if status.index.versionInService == nil { parts.append("no geocoder index") }
        var line = parts.joined(separator: ", ")
        // Until a reload is applied: systemctl status is where an operator looks after one failed.
        if let refused = status.reloadRefused { line = "reload refused: \(refused); running the previous configuration; \(line)" }
        // One line: a newline would start another notify field (a key quoted in the YAML can hold one).
        return String(String.UnicodeScalarView(line.unicodeScalars.filter { $0 != "\n" && $0 != "\r" }))
    }

    func run() async {
        let interval = Watchdog.interval()
        if let interval {
            logger.info("systemd watchdog enabled", metadata: ["interval_ms": "\(interval.components.seconds * 1000 + interval.components.attoseconds / 1_000_000_000_000_000)"])
        }
        await withGracefulShutdownHandler {
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await _ in store.updates().cancelOnGracefulShutdown() {
                        notifier.status(Self.statusLine(store))
                    }
                }
                group.addTask {
                    for await _ in store.powerStateChanges().cancelOnGracefulShutdown() {
                        notifier.status(Self.statusLine(store))
                    }
                }
                if let interval {
                    group.addTask {
                        while !Task.isCancelled {
                            do {
                                try await Task.sleep(for: interval / 2)
                            } catch {
                                return
                            }
                            await scheduler.heartbeat()
                            notifier.send(["WATCHDOG=1", "STATUS=\(Self.statusLine(store))"])
                        }
                    }
                }
                group.addTask {
                    try? await gracefulShutdown()
                }
                await group.next()
                group.cancelAll()
            }
        } onGracefulShutdown: {
            notifier.stopping()
        }
    }
}
