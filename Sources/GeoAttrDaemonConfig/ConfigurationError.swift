import GeoAttrModel

/// A configuration that cannot be used, with the key to fix.
package struct ConfigurationError: Error, CustomStringConvertible {
    package var key: String
    package var problem: String

    /// One line, whatever the parser said.
    package var description: String {
        let flat = problem.split(whereSeparator: \.isNewline).map { $0.trimmingWhitespace() }.filter { !$0.isEmpty }
        return "invalid configuration: \(key): \(flat.joined(separator: " | "))"
    }
}
