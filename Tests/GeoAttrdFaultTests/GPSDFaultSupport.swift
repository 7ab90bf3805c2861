import GeoPlaces
import Foundation
import GeoAttrClient
import GeoAttrModel
import Testing
import TestSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// NMEA tracks for the gpsd, clock and signal fault scenarios, replayed phase by phase, and what
/// gpsd's debug log (`-D 4`) says the daemon did.
///
/// Tracks are dated by the real UTC clock (the first epoch two minutes ahead), like a receiver
/// with a good almanac: a fix's receiver time then compares sensibly with the system clock and
/// with the fix times served before it, whatever day the suite runs.
enum FaultTrack {
    struct GeoPlace: Sendable {
        var latitude: Double
        var longitude: Double
    }

    static let amsterdam = GeoPlace(latitude: 52.3731, longitude: 4.8922)
    static let paris = GeoPlace(latitude: 48.8566, longitude: 2.3522)
    /// What a bad-checksum sentence in the garbage scenario claims: must never be served.
    static let decoy = GeoPlace(latitude: 10.5, longitude: 20.5)

    /// The daemon's watch request: one per one-shot fix (gpsfake's own watcher asks for NMEA).
    static let watchRequest = "?WATCH={\"enable\":true,\"json\":true}"

    static func fix(at place: GeoPlace) -> NMEATrack.Epoch {
        NMEATrack.Epoch(latitude: place.latitude, longitude: place.longitude, mode: 3)
    }

    /// A run of epochs, with the date the receiver claims for them (`nil`: today's).
    struct Phase {
        var epochs: [NMEATrack.Epoch]
        var year: Int?
        /// Writes a ZDA (4-digit year) before each epoch, so that every report of the phase
        /// carries the phase's date, not only those after its first RMC.
        var zda = false

        init(_ epochs: [NMEATrack.Epoch], year: Int? = nil, zda: Bool = false) {
            self.epochs = epochs
            self.year = year
            self.zda = zda
        }

        static func repeating(_ epoch: NMEATrack.Epoch, _ count: Int) -> Phase {
            Phase(NMEATrack.repeating(epoch, count))
        }
    }

    /// A rendered track: the NMEA log, and where each phase starts.
    struct Rendered {
        var nmea: String
        /// Unix time of each phase's first epoch.
        var phaseStarts: [Int64]

        /// Text gpsd logs (level 4) when it reads phase `index`'s first epoch: its GGA.
        func marker(ofPhase index: Int) -> String {
            "GPGGA,\(FaultTrack.timeOfDay(phaseStarts[index]))"
        }
    }

    /// The phases one after the other, one second per epoch, the first epoch `offset` seconds
    /// from now, dated accordingly (also across midnight). Two minutes ahead by default: a fix
    /// whose report came before gpsd knew the date is dated by the system clock, and the fixes
    /// after it, dated by the receiver, must not look older. The replay runs four times faster
    /// than the receiver's clock: a receiver that comes back later (a restarted gpsd) starts
    /// minutes later, so that its times follow the first one's.
    static func render(_ phases: [Phase], startingSecondsFromNow offset: Int64 = 120, startingAt start: Int64? = nil) -> Rendered {
        var time = start ?? UTCTimestamp.now().seconds + offset
        var nmea = ""
        var starts: [Int64] = []
        for phase in phases {
            starts.append(time)
            // One NMEATrack per UTC day the phase touches.
            var index = 0
            while index < phase.epochs.count {
                let (year, month, day, second) = civil(time)
                let count = min(phase.epochs.count - index, 86_400 - second)
                var track = NMEATrack(epochs: Array(phase.epochs[index..<(index + count)]))
                track.year = phase.year ?? year
                track.month = month
                track.day = day
                track.startSecondOfDay = second
                if phase.zda {
                    for epoch in track.epochs.indices {
                        let zda = NMEATrack.sentence(
                            "GPZDA,\(timeOfDay(time + Int64(epoch))),\(String(format: "%02d,%02d,%04d", day, month, track.year)),00,00")
                        track.epochs[epoch].noiseBefore = zda + track.epochs[epoch].noiseBefore
                    }
                }
                nmea += track.render()
                index += count
                time += Int64(count)
            }
        }
        return Rendered(nmea: nmea, phaseStarts: starts)
    }

    /// Year, month, day and second of the day of a Unix time (UTC).
    static func civil(_ unix: Int64) -> (year: Int, month: Int, day: Int, second: Int) {
        let text = UTCTimestamp(seconds: unix).iso8601.prefix(19)  // 2026-11-21T09:41:00
        let fields = text.split(whereSeparator: { "-T:".contains($0) }).compactMap { Int($0) }
        guard fields.count >= 6 else { return (2026, 1, 1, 0) }
        return (fields[0], fields[1], fields[2], fields[3] * 3600 + fields[4] * 60 + fields[5])
    }

    /// A steady 3D track long enough that gpsfake never loops during a scenario (receiver times
    /// only move forward).
    static func steady(at place: GeoPlace = amsterdam, epochs: Int = 1_200, startingSecondsFromNow offset: Int64 = 120) -> Rendered {
        render([.repeating(fix(at: place), epochs)], startingSecondsFromNow: offset)
    }

    /// hhmmss.00 of a Unix time (UTC), as NMEA writes it.
    static func timeOfDay(_ unix: Int64) -> String {
        let second = Int(((unix % 86_400) + 86_400) % 86_400)
        return String(format: "%02d%02d%02d.00", second / 3600, (second / 60) % 60, second % 60)
    }

    static func isNear(_ document: AttributesDocument?, _ place: GeoPlace) -> Bool {
        guard case .double(let latitude) = document?.attributes["geo.location.lat"],
              case .double(let longitude) = document?.attributes["geo.location.lon"]
        else { return false }
        return abs(latitude - place.latitude) < 1e-5 && abs(longitude - place.longitude) < 1e-5
    }
}

extension GPSFake {
    /// The daemon's connections to gpsd so far: one watch request per one-shot fix.
    var daemonConnections: [LineRecorder.Line] {
        log.all.filter { $0.text.contains(FaultTrack.watchRequest) }
    }
}

extension FaultDaemon {
    /// Forces a fix (SIGUSR1) and returns the daemon's connection as gpsd saw it.
    func forceFix(on gpsfake: GPSFake, sourceLocation: SourceLocation = #_sourceLocation) async throws -> GPSFake.Client {
        let mark = gpsfake.log.all.count
        let accepted = try await daemon.waitForStatus("the status") { _ in true }.refreshesAccepted
        daemon.signal(SIGUSR1)
        try await daemon.waitForRefreshAccepted(after: accepted)
        return try #require(
            await gpsfake.clientUnderTest(from: mark), "the daemon did not connect to gpsd; gpsd: \(gpsfake.log.text.suffix(2000))",
            sourceLocation: sourceLocation)
    }

    /// The `fix accepted` lines from log line `start` on.
    /// The positions of the fixes accepted (logged at debug level: start the daemon with
    /// `FaultConfig.gpsd(..., positions: true)`).
    func acceptedFixes(from start: Int = 0) -> [LineRecorder.Line] {
        daemon.log.all.dropFirst(start).filter { $0.text.contains("fix position") }
    }

    /// `GET /v1/status` as JSON.
    func status() async -> [String: Any]? {
        guard let response = try? await client.status() else { return nil }
        return try? JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]
    }
}

/// A fault that could not be injected.
struct FaultInjectionError: Error, CustomStringConvertible {
    var description: String
}

/// Seconds between two log lines' arrivals (monotonic).
func secondsBetween(_ earlier: LineRecorder.Line, _ later: LineRecorder.Line) -> Double {
    Double(later.nanoseconds - earlier.nanoseconds) / 1e9
}
