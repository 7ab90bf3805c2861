/// Whether the device is in the foreground (fixes on schedule) or the background (no fixes and
/// no gpsd connection at all, to save the battery; only explicit refreshes).
public enum PowerState: String, Sendable, Hashable, Codable, CaseIterable {
    case foreground
    case background

    /// Parses a state file's content: `foreground` or `background`, surrounding whitespace
    /// ignored. `nil` for anything else.
    public init?(stateFileContent content: String) {
        self.init(rawValue: content.trimmingWhitespace())
    }
}
