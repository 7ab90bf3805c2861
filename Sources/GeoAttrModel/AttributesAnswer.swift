/// What one client is told about the served location, before it takes a format: the JSON
/// document, and the one time the document carries as text that Prometheus needs as a number.
public struct AttributesAnswer: Sendable, Equatable {
    public var document: AttributesDocument
    /// When the location was obtained, in seconds since the epoch.
    public var updatedAtSeconds: Int64

    public init(document: AttributesDocument, updatedAtSeconds: Int64) {
        self.document = document
        self.updatedAtSeconds = updatedAtSeconds
    }
}
