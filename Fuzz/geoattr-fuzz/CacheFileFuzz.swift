import GeoPlaces
import GeoAttrCore
import GeoAttrLinux
import GeoAttrModel

/// The cache file: `CacheFile.load()`, as the scheduler restores the last result at start, on
/// a cache.json with the fuzzed bytes.
struct CacheFileFuzz: FuzzHarness {
    let cache = CacheFile(directory: Scratch.path("cache", directory: true))

    init() throws {}

    func run(_ input: [UInt8]) {
        do {
            // A corrupt file is moved aside by load(); each input is written afresh.
            try Scratch.write(input, to: cache.path)
        } catch {
            fatalError("cache harness: \(error)")
        }
        guard let result = try? cache.load() else { return }
        // Whatever loads is served: render it as the API and the output files would.
        _ = result.attributes.map { "\($0.key)=\($0.value)" }
        _ = result.fix.time.iso8601
        _ = result.updatedAt.iso8601
    }

    /// Cache files as the daemon writes them (CacheFile.save): a GPS fix with a full place, and a
    /// static location with none.
    static func seeds() throws -> [(name: String, bytes: [UInt8])] {
        let directory = Scratch.path("cache-seeds", directory: true)
        let cache = CacheFile(directory: directory)
        let now = UTCTimestamp(seconds: 1_795_248_061, nanoseconds: 615_000_000)
        let results = [
            LocationResult(
                fix: Fix(
                    latitude: 47.3769, longitude: 8.5417, altitudeMeters: 408, mode: .threeDimensional,
                    horizontalErrorMeters: 25, receiverTime: now, timeSource: .receiver, receivedAt: now,
                    timeToFixMilliseconds: 1432.5, origin: .gps),
                place: GeoPlace(
                    countryCode: "CH", regionCode: "CH-ZH", localityName: "Zürich", postalCode: "8001",
                    continentCode: "EU", boundaryMarginMeters: 1520),
                source: .gps, updatedAt: now, indexVersion: "geoattr-world 3, built 2026-01-01", generation: 1_795_248_061_615),
            LocationResult(
                fix: Fix(
                    latitude: -33.8688, longitude: 151.2093, mode: .twoDimensional, timeSource: .systemClock,
                    receivedAt: now.adding(seconds: -86_400), origin: .static),
                place: nil, source: .static, updatedAt: now, indexVersion: nil, generation: 7),
        ]
        var seeds: [(name: String, bytes: [UInt8])] = []
        for (number, result) in results.enumerated() {
            try cache.save(result)
            guard let bytes = GeoAttrFuzz.readFile(cache.path) else {
                throw HarnessSetupError(description: "cannot read back \(cache.path)")
            }
            seeds.append(("cache-\(number).json", bytes))
        }
        return seeds
    }
}
