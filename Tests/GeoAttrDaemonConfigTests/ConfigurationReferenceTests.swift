import Foundation
import GeoAttrModel
import Testing

@testable import GeoAttrDaemonConfig

/// docs/configuration.md and man/geoattrd.yaml.5 are generated from the key table: these tests
/// render them and fail when the committed files differ. GEOATTR_WRITE_DOCS=1 writes them instead.
@Suite("the configuration reference is the key table's")
struct ConfigurationReferenceTests {
    static let root = "/" + #filePath.split(separator: "/").dropLast(3).joined(separator: "/")

    static func reference() throws -> ConfigurationReference {
        let sample = try String(contentsOfFile: root + "/config/geoattrd.yaml", encoding: .utf8)
        return ConfigurationReference(keys: ConfigurationKeys.all, sampleFile: sample, version: ProductVersion.number)
    }

    @Test("the committed document is what the key table renders", arguments: [("docs/configuration.md", false), ("man/geoattrd.yaml.5", true)])
    func generated(path: String, isManualPage: Bool) throws {
        let reference = try Self.reference()
        let rendered = isManualPage ? reference.roff() : reference.markdown()
        try DocumentCheck.compare(rendered, withFile: Self.root + "/" + path, regenerate: ConfigurationReference.regenerate)
    }

    @Test("every key has a description and an example from the shipped file")
    func everyKeyDescribed() throws {
        let reference = try Self.reference()
        for key in ConfigurationKeys.all {
            #expect(!reference.description(of: key).isEmpty, "\(key.name): no comment above it in config/geoattrd.yaml")
            #expect(!reference.example(of: key).isEmpty, "\(key.name)")
        }
    }
}

/// A generated document against its committed copy.
enum DocumentCheck {
    static func compare(_ rendered: String, withFile path: String, regenerate: String) throws {
        if ProcessInfo.processInfo.environment["GEOATTR_WRITE_DOCS"] == "1" {
            try rendered.write(toFile: path, atomically: true, encoding: .utf8)
            return
        }
        let committed = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
        guard committed != rendered else { return }
        let old = committed.split(separator: "\n", omittingEmptySubsequences: false)
        let new = rendered.split(separator: "\n", omittingEmptySubsequences: false)
        let line = zip(old, new).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(old.count, new.count)
        Issue.record("""
            \(path) is out of date with what generates it (first difference at line \(line + 1)):
              committed: \(line < old.count ? String(old[line]) : "(end of file)")
              generated: \(line < new.count ? String(new[line]) : "(end of file)")
            Regenerate it: \(regenerate)
            """)
    }
}
