import GeoAttrCore
import GeoAttrDaemonConfig
import GeoAttrGeocoder
import GeoAttrServer
import GeoAttrSystemd
import Logging

/// What a reload reconfigures in the running daemon, in this order: the log level, the index
/// (read again), the schedule and fix source, the static location, the API's access policy and
/// schedule, the output files.
struct RunningParts: ReloadTarget {
    let logLevel: JournalLogHandler.SharedLevel
    let indexReloader: GeocoderReloader
    let scheduler: Scheduler
    let server: APIServer
    let outputs: FileOutputs
    /// The daemon's logger, from which a new fix source takes its own.
    let logger: Logger

    func apply(_ configuration: DaemonConfiguration) async {
        logLevel.value = configuration.logLevel
        await indexReloader.reload(reason: "SIGHUP")
        scheduler.reconfigure(configuration.schedule, fixSource: configuration.fixSource(logger: logger))
        scheduler.setStaticLocation(configuration.staticSource())
        server.update(policy: configuration.accessPolicy(), schedule: configuration.schedule)
        outputs.update(configuration.outputSettings())
    }
}
