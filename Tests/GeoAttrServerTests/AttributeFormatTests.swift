import Foundation
import GeoAttrModel
import Testing
import TestSupport

/// The formats are named in one enum; the API document must offer the same names.
struct AttributeFormatTests {
    @Test("docs/openapi.yaml's format parameter lists every format, in the enum's order")
    func openAPIListsEveryFormat() throws {
        let document = try String(contentsOfFile: RepositoryRoot.file("docs/openapi.yaml"), encoding: .utf8)
        let line = try #require(document.split(separator: "\n").first { $0.contains("enum:") && $0.contains("json") })
        let names = try #require(line.split(separator: "[").last?.split(separator: "]").first)
            .split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        #expect(names == AttributeFormat.allCases.map(\.rawValue))
    }

    @Test("the error message's list reads as a sentence")
    func choices() {
        #expect(AttributeFormat.choices == "json, otel, env or prometheus")
    }
}
