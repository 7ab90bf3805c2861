public import Logging
import Synchronization

/// A logger that keeps every line it is given (level, message and metadata), for a test to
/// inspect what the code under test logged: the one seam through which a library reports what it
/// saw without a hook of its own.
public final class RecordedLog: Sendable {
    public struct Line: Sendable {
        public var level: Logger.Level
        public var message: String
        public var metadata: [String: String]
    }

    private let storage = Mutex<[Line]>([])

    public init() {}

    /// A logger at trace level whose lines are kept here.
    public var logger: Logger {
        var logger = Logger(label: "test") { _ in RecordingLogHandler(log: self) }
        logger.logLevel = .trace
        return logger
    }

    /// A logger at trace level whose lines, with what `metadataProvider` adds, are kept here.
    public func logger(metadataProvider: Logger.MetadataProvider) -> Logger {
        var logger = Logger(label: "test") { _ in RecordingLogHandler(log: self, metadataProvider: metadataProvider) }
        logger.logLevel = .trace
        return logger
    }

    /// Every line so far, in the order logged.
    public var lines: [Line] { storage.withLock { $0 } }

    /// How many lines at `level` contain `text`.
    public func count(_ level: Logger.Level, _ text: String) -> Int {
        lines.filter { $0.level == level && $0.message.contains(text) }.count
    }

    fileprivate func append(_ line: Line) {
        storage.withLock { $0.append(line) }
    }
}

private struct RecordingLogHandler: LogHandler {
    let log: RecordedLog
    var metadataProvider: Logger.MetadataProvider?
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let provided = metadataProvider?.get() ?? [:]
        let merged = provided.merging(metadata) { _, new in new }.merging(event.metadata ?? [:]) { _, new in new }
        log.append(
            RecordedLog.Line(
                level: event.level, message: "\(event.message)", metadata: merged.mapValues { "\($0)" }))
    }
}
