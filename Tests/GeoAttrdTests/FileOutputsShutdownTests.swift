import Foundation
import GeoAttrCore
import GeoAttrModel
@testable import geoattrd
import Logging
import ServiceLifecycleTestKit
import Testing
import TestSupport

/// The output files' service, run in-process in a ServiceGroup and shut down gracefully, as
/// SIGTERM does in the daemon.
@Suite("FileOutputs at a graceful shutdown")
struct FileOutputsShutdownTests {
    static func contents(_ path: String) -> String {
        (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
    }

    @Test("the files follow the served result until the shutdown; the service then returns at once and leaves no temporary file")
    func writesThenStops() async throws {
        let directory = try TemporaryDirectory(prefix: "geoattrd-outputs")
        let (envFile, prometheusFile) = (directory.file("geo.env"), directory.file("geo.prom"))
        let store = AttributeStore(powerState: .foreground)
        let logger = Logger(label: "test")
        let outputs = FileOutputs(
            envFile: envFile, prometheusFile: prometheusFile, settings: FileOutputs.Settings(grant: Grant(level: .exact)),
            ttl: .seconds(3600), store: store.reader, logger: logger)
        var moved = LocationResult.sample(generation: 2)
        moved.fix.latitude = 51.2194

        var triggeredAt = ContinuousClock.now
        let ended = try await runServiceGroup([outputs], logger: logger) { trigger in
            store.publish(ServedResult(result: .sample(generation: 1), obtainedAt: .now))
            #expect(await eventually { Self.contents(envFile).contains("Brussels") && Self.contents(prometheusFile).contains("Brussels") })
            store.publish(ServedResult(result: moved, obtainedAt: .now))
            #expect(await eventually { Self.contents(envFile).contains("51.2194") && Self.contents(prometheusFile).contains("51.2194") })
            triggeredAt = .now
            trigger.triggerGracefulShutdown()
        }
        #expect(ended - triggeredAt < .seconds(5), "the service did not return by itself at the shutdown")

        let written = (Self.contents(envFile), Self.contents(prometheusFile))
        var later = moved
        later.generation = 3
        later.fix.latitude = 50.4108
        // Stopped outputs follow the store no more: nothing is left that could write.
        #expect(await eventually { store.updateSubscriberCount == 0 })
        store.publish(ServedResult(result: later, obtainedAt: .now))
        #expect(Self.contents(envFile) == written.0 && Self.contents(prometheusFile) == written.1, "a file was written after the stop")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == ["geo.env", "geo.prom"])
    }
}
