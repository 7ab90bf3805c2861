public import Logging

extension Logger {
    /// The metadata key that names the part of the program a logger serves (`api`, `gpsd`).
    /// ``JournalLogHandler`` shows it after the label; any other handler, as metadata.
    public static let componentMetadataKey = "component"

    /// A copy of this logger (its handler, level and metadata) for one part of the program,
    /// whose lines then name it: `geoattrd.api: ...`. A part within a part is joined with a dot
    /// (`api.metrics`).
    public func component(_ name: String) -> Logger {
        var child = self
        let parent = self[metadataKey: Self.componentMetadataKey].map { "\($0)." } ?? ""
        child[metadataKey: Self.componentMetadataKey] = "\(parent)\(name)"
        return child
    }
}
