import Foundation
import Testing
import TestSupport

/// docs/operating.md's troubleshooting table answers what `geoattrctl doctor` reports: every
/// check the doctor makes has a row, and every row names a check the doctor makes.
@Suite("the troubleshooting table follows geoattrctl doctor")
struct TroubleshootingTableTests {
    /// The check names in the doctor's findings (`check: "socket"`), in every Doctor*.swift.
    static func doctorChecks() throws -> Set<String> {
        let directory = RepositoryRoot.file("Sources/geoattrctl")
        let files = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasPrefix("Doctor") && $0.hasSuffix(".swift") }
        let source = try files.map { try String(contentsOfFile: "\(directory)/\($0)", encoding: .utf8) }.joined()
        var names: Set<String> = []
        var rest = Substring(source)
        while let start = rest.firstRange(of: "check: \"") {
            let after = rest[start.upperBound...]
            guard let end = after.firstIndex(of: "\"") else { break }
            names.insert(String(after[..<end]))
            rest = after[end...]
        }
        return names
    }

    /// The first cell of each row of the first table under "## Troubleshooting": the check's
    /// name in backquotes.
    static func tableChecks() throws -> [String] {
        let document = try String(contentsOfFile: RepositoryRoot.file("docs/operating.md"), encoding: .utf8)
        guard let section = document.firstRange(of: "\n## Troubleshooting") else { return [] }
        var rows: [String] = []
        var inTable = false
        for line in document[section.upperBound...].split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("## ") { break }
            if line.hasPrefix("|") {
                inTable = true
            } else if inTable {
                break
            }
            guard line.hasPrefix("| `") else { continue }
            let cell = line.dropFirst(3)
            guard let end = cell.firstIndex(of: "`") else { continue }
            rows.append(String(cell[..<end]))
        }
        return rows
    }

    @Test("every doctor check has a row, and every row names a doctor check")
    func checksAndRowsAgree() throws {
        let checks = try Self.doctorChecks()
        let rows = try Self.tableChecks()
        #expect(checks.count >= 10, "found \(checks.sorted()) in the Doctor*.swift files")
        for check in checks.sorted() where !rows.contains(check) {
            Issue.record("geoattrctl doctor reports `\(check)`: docs/operating.md's troubleshooting table has no row for it")
        }
        for row in Set(rows).sorted() where !checks.contains(row) {
            Issue.record("docs/operating.md's troubleshooting table has a row for `\(row)`, which geoattrctl doctor does not report")
        }
    }
}
