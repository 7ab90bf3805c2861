import SystemPackage

/// A path's directory and last component, for the calls that work relative to the directory.
package enum PathComponents {
    /// The directory (`.` for a bare name) and the last component.
    package static func split(_ path: String) -> (directory: String, name: String) {
        let filePath = FilePath(path)
        let directory = filePath.removingLastComponent().string
        return (directory.isEmpty ? "." : directory, filePath.lastComponent?.string ?? "")
    }
}
