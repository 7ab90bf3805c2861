import Foundation
import GeoAttrModel
import Testing
import TestSupport

@testable import GeoAttrDaemonConfig

/// docs/configuration.md and man/geoattrd.yaml.5 are generated from the key table: these tests
/// render them and fail when the committed files differ. GEOATTR_WRITE_DOCS=1 writes them instead.
@Suite("the configuration reference is the key table's")
struct ConfigurationReferenceTests {
    static func reference() throws -> ConfigurationReference {
        let sample = try String(contentsOfFile: RepositoryRoot.file("config/geoattrd.yaml"), encoding: .utf8)
        return ConfigurationReference(keys: ConfigurationKeys.all, sampleFile: sample, version: ProductVersion.number)
    }

    @Test("the committed document is what the key table renders", arguments: [("docs/configuration.md", false), ("man/geoattrd.yaml.5", true)])
    func generated(path: String, isManualPage: Bool) throws {
        let reference = try Self.reference()
        let rendered = isManualPage ? reference.roff() : reference.markdown()
        try GeneratedFile.compare(rendered, withFile: RepositoryRoot.file(path), regenerate: ConfigurationReference.regenerate)
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
