@testable import GeoAttrServer
import NIOCore
import Testing

/// A client that does not take its answers is held to the head timeout, not the idle one.
@Suite("Pipeline: answers backing up")
struct PipelineBackPressureTests {
    let fixture = ServerFixture()

    @Test func answersBackingUpShortenTheDeadlineAndTakingThemRestoresIt() throws {
        let connection = try EmbeddedConnection(fixture)
        _ = try connection.exchange("GET /v1/status HTTP/1.1\r\n\r\n")
        connection.setWritable(false)
        connection.setWritable(true)
        connection.advanceTime(by: .seconds(59))
        #expect(connection.isOpen)
        connection.setWritable(false)
        connection.advanceTime(by: .seconds(9))
        #expect(connection.isOpen)
        connection.advanceTime(by: .seconds(1))
        #expect(!connection.isOpen)
    }

    @Test func anAnswerWrittenWhileBackedUpLeavesTheHeadDeadline() throws {
        let connection = try EmbeddedConnection(fixture)
        connection.setWritable(false)
        _ = try connection.exchange("GET /v1/status HTTP/1.1\r\n\r\n")
        connection.advanceTime(by: .seconds(10))
        #expect(!connection.isOpen)
    }
}
