import GeoAttrServer
import Testing
import GeoAttrSettings

/// access.rules entries that must be refused with a ParseError (the daemon then exits 78 naming
/// the key), never crash the configuration loader.
@Suite("Access rule parsing")
struct AccessRuleParsingTests {
    /// A level of only "/" left no pieces to read the level from: an index out of range.
    @Test(arguments: ["uid:1=/", "gid:2=/", "uid:1001=//", "uid:1=/2", "uid:1=="])
    func malformedLevelIsAParseError(text: String) {
        #expect(throws: AccessPolicy.ParseError.self) { try AccessPolicy.parseRule(text) }
    }
}
