import Testing
import TestSupport

/// `geoattrctl lookup` options that are checked before any index is opened.
@Suite("geoattrctl lookup")
struct LookupCommandTests {
    @Test("--jobs out of range, or without --batch: exit 64 and a message naming --jobs", arguments: [
        ["lookup", "--batch", "--jobs", "0"], ["lookup", "--batch", "--jobs", "65"], ["lookup", "--jobs", "2", "1", "1"],
    ])
    func invalidJobs(arguments: [String]) async throws {
        let result = try await CommandResult.run(FixCommandTests.geoattrctl, arguments)
        #expect(result.status == 64)
        #expect(result.stderr.contains("--jobs"), "\(result.stderr)")
    }
}
