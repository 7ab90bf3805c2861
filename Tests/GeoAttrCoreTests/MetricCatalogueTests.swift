import Foundation
import GeoAttrCore
import Testing
import TestSupport

/// The catalogue is the one list of the daemon's metric families: the sources name none
/// elsewhere, and the documentation lists exactly its families with their labels.
@Suite("Metric catalogue")
struct MetricCatalogueTests {
    /// How the documentation writes a family: its name, and its labels in braces.
    static func documented(_ family: MetricFamily) -> String {
        family.labelNames.isEmpty ? family.name : "\(family.name){\(family.labelNames.joined(separator: ","))}"
    }

    @Test("names are unique, Prometheus-shaped, and each has a help text")
    func namesAreWellFormed() {
        let names = MetricCatalogue.all.map(\.name)
        #expect(Set(names).count == names.count)
        for family in MetricCatalogue.all {
            #expect(family.name.hasPrefix("geoattrd_"), "\(family.name)")
            #expect(family.name.hasSuffix("_total") == (family.kind == .counter), "\(family.name)")
            #expect(!family.help.isEmpty, "\(family.name)")
            #expect(MetricCatalogue.family(named: family.name) == family)
        }
        #expect(MetricCatalogue.refreshDecisions == ["accepted", "joined", "refused"])
        #expect(MetricCatalogue.fixOutcomes.first == "fix")
    }

    @Test("no source file but the catalogue spells a family's name")
    func namesLiveInTheCatalogue() throws {
        let sources = RepositoryRoot.file("Sources")
        let files = try #require(FileManager.default.enumerator(atPath: sources)).compactMap { $0 as? String }
            .filter { $0.hasSuffix(".swift") && !$0.hasSuffix("/MetricCatalogue.swift") }
        #expect(!files.isEmpty)
        for file in files {
            let text = try String(contentsOfFile: "\(sources)/\(file)", encoding: .utf8)
            for family in MetricCatalogue.all {
                #expect(!text.contains("\"\(family.name)"), "\(file) names \(family.name): make it from MetricCatalogue")
            }
        }
    }

    @Test("docs/clients.md's /metrics row lists exactly the catalogue's families, with their labels")
    func documentationListsTheCatalogue() throws {
        let text = try String(contentsOfFile: RepositoryRoot.file("docs/clients.md"), encoding: .utf8)
        let row = try #require(text.split(separator: "\n").first { $0.hasPrefix("| `GET /metrics` |") })
        let listed = row.matches(of: /`(geoattrd_[a-z_]+(?:\{[a-z_,]+\})?)`/).map { String($0.output.1) }
        #expect(listed == MetricCatalogue.all.map(Self.documented))
    }
}
