public import Logging
import Synchronization
import SystemWrites

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Log lines on standard error in a form journald and operators read well: one line per event,
/// `message key=value ...`.
///
/// Under systemd (`JOURNAL_STREAM` set) each line starts with its syslog priority (`<6>`) so
/// the journal files it at the right level, and carries no timestamp (the journal adds one).
/// Otherwise lines start with an ISO 8601 UTC timestamp and the level.
///
/// A logger's component (``Logging/Logger/component(_:)``) follows the label, `geoattrd.api:`,
/// rather than standing among the `key=value` pairs: it says which part speaks, as a label
/// would, while every part shares the one logger the daemon made.
public struct JournalLogHandler: LogHandler {
    /// The level every handler consults, so a reload can change it at run time.
    public final class SharedLevel: Sendable {
        private let level: Mutex<Logger.Level>
        public init(_ level: Logger.Level) { self.level = Mutex(level) }
        public var value: Logger.Level {
            get { level.withLock { $0 } }
            set { level.withLock { $0 = newValue } }
        }
    }

    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    private let label: String
    private let sharedLevel: SharedLevel
    private let journal: Bool

    public var logLevel: Logger.Level {
        get { sharedLevel.value }
        set { sharedLevel.value = newValue }
    }

    public init(label: String, level: SharedLevel, journal: Bool = Self.underJournal) {
        self.label = label
        self.sharedLevel = level
        self.journal = journal
    }

    /// Whether standard error is connected to the journal.
    public static var underJournal: Bool { getenv("JOURNAL_STREAM") != nil }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var merged = metadata
        let component = merged.removeValue(forKey: Logger.componentMetadataKey)
        if let provided = metadataProvider?.get() { merged.merge(provided) { $1 } }
        if let extra = event.metadata { merged.merge(extra) { $1 } }
        var line = journal ? "<\(Self.priority(event.level))>" : "\(Self.timestamp()) \(event.level) "
        line += "\(component.map { "\(label).\($0)" } ?? label): \(event.message)"
        for (key, value) in merged.sorted(by: { $0.key < $1.key }) {
            line += " \(key)=\(Self.quoted("\(value)"))"
        }
        line = line.replacingNewlines() + "\n"
        // A line that cannot be written has nowhere else to go.
        try? Descriptor.writeAll(Array(line.utf8), to: STDERR_FILENO)
    }

    /// syslog priorities (sd-daemon.h): debug 7, info 6, notice 5, warning 4, err 3, crit 2.
    static func priority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
    }

    static func quoted(_ value: String) -> String {
        if !value.isEmpty, !value.contains(where: { $0 == " " || $0 == "\"" || $0 == "=" }) { return value }
        return "\"" + value.replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }

    static func timestamp() -> String {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        var time = ts.tv_sec
        var parts = tm()
        gmtime_r(&time, &parts)
        func pad(_ value: Int32, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        let millis = Int32(ts.tv_nsec / 1_000_000)
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))T"
            + "\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2)).\(pad(millis, 3))Z"
    }
}

extension String {
    fileprivate func replacingNewlines() -> String {
        contains("\n") ? split(separator: "\n", omittingEmptySubsequences: false).joined(separator: "\\n") : self
    }

    fileprivate func replacingOccurrences(of target: String, with replacement: String) -> String {
        split(separator: Character(target), omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
