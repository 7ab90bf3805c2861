/// The checkout the tests were built from: where the committed files they check live (the
/// documents and manual pages generated from code, the shipped configuration, the examples)
/// and where SwiftPM puts its builds.
public enum RepositoryRoot {
    /// This file is <root>/Tests/TestSupport/RepositoryRoot.swift; #filePath is absolute.
    public static let path = "/" + #filePath.split(separator: "/").dropLast(3).joined(separator: "/")

    /// `relativePath` (`config/geoattrd.yaml`) in the checkout.
    public static func file(_ relativePath: String) -> String { "\(path)/\(relativePath)" }
}
