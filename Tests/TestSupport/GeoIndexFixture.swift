import Foundation
import GeoIndex
import GeoIndexBuilder
import GeoPlaces
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Small synthetic sources written by the tests themselves (no downloaded data needed).
///
/// Layout (lon x lat, degrees):
/// - AA: [0,2] x [0,2.5] (its polygon reaches into the sea like a territorial-waters zone;
///   its admin-1 regions stop at lat 2), with a hole at [0.5,0.7]^2 that is an enclave of BB.
/// - BB: [2,4] x [0,2] plus the enclave.
/// - CC: both sides of the antimeridian at lat [-17,-16].
/// - Zone "DD,EE": [10,12] x [10,12], split into DD and EE by the admin-1 layer at lon 11.
/// Admin-1: AA-N (lat > 1), AA-S (given as second-level AA-S1), BB-X spilling 0.1 degree into AA.
public enum Fixture {
    public static func square(_ x0: Double, _ y0: Double, _ x1: Double, _ y1: Double) -> String {
        "[[\(x0),\(y0)],[\(x1),\(y0)],[\(x1),\(y1)],[\(x0),\(y1)],[\(x0),\(y0)]]"
    }

    public static func feature(_ properties: String, polygons: [[String]]) -> String {
        let coordinates = polygons.map { "[" + $0.joined(separator: ",") + "]" }.joined(separator: ",")
        return #"{"type":"Feature","properties":{\#(properties)},"geometry":{"type":"MultiPolygon","coordinates":[\#(coordinates)]}}"#
    }

    public static func collection(_ features: [String]) -> String {
        #"{"type":"FeatureCollection","features":["# + features.joined(separator: ",") + "]}"
    }

    static let countries = [
        feature(#""country":"AA","zone":"Test/AA""#, polygons: [[square(0, 0, 2, 2.5), square(0.5, 0.5, 0.7, 0.7)]]),
        feature(#""country":"BB","zone":"Test/BB""#, polygons: [[square(2, 0, 4, 2)], [square(0.5, 0.5, 0.7, 0.7)]]),
        feature(#""country":"CC","zone":"Test/CC""#, polygons: [[square(179, -17, 180, -16)], [square(-180, -17, -179, -16)]]),
        feature(#""country":"DD","zone":"Test/DDEE","split":"DD,EE""#, polygons: [[square(10, 10, 12, 12)]]),
        feature(#""country":"-99","zone":"Etc/Test""#, polygons: [[square(20, 20, 21, 21)]]),
    ]

    public static let admin1 = collection([
        feature(#""iso_a2":"AA","name":"North","iso_3166_2":"AA-N""#, polygons: [[square(0, 1, 2, 2), square(0.5, 0.5, 0.7, 0.7)]]),
        feature(#""iso_a2":"AA","name":"South","iso_3166_2":"AA-S1""#, polygons: [[square(0, 0, 1.9, 1), square(0.5, 0.5, 0.7, 0.7)]]),
        feature(#""iso_a2":"BB","name":"Bee","iso_3166_2":"BB-X""#, polygons: [[square(1.9, 0, 4, 2)], [square(0.5, 0.5, 0.7, 0.7)]]),
        feature(#""iso_a2":"AA","name":"Bogus","iso_3166_2":"AA-ZZ""#, polygons: [[square(30, 30, 31, 31)]]),
        feature(#""iso_a2":"DD","name":"Dee","iso_3166_2":"DD-1""#, polygons: [[square(10, 10, 11, 12)]]),
        feature(#""iso_a2":"EE","name":"Eee","iso_3166_2":"EE-1""#, polygons: [[square(11, 10, 12, 12)]]),
        feature(#""iso_a2":"CC","name":"East","iso_3166_2":"CC-E""#, polygons: [[square(179, -17, 180, -16)], [square(-180, -17, -179, -16)]]),
    ])

    public static let iso = #"""
        {"3166-2":[
        {"code":"AA-N","name":"North","type":"Region"},
        {"code":"AA-S","name":"South","type":"Region"},
        {"code":"AA-S1","name":"South One","type":"County","parent":"S"},
        {"code":"BB-X","name":"Bee","type":"Region"},
        {"code":"CC-E","name":"East","type":"Division"},
        {"code":"DD-1","name":"Dee","type":"Province"},
        {"code":"EE-1","name":"Eee","type":"Province"},
        {"code":"FR-OCC","name":"Occitanie","type":"Metropolitan region"},
        {"code":"FR-34","name":"H\u00e9rault","type":"Metropolitan department","parent":"OCC"},
        {"code":"GB-ENG","name":"England","type":"Nation"},
        {"code":"GB-KEN","name":"Kent","type":"Two-tier county","parent":"GB-ENG"},
        {"code":"IT-62","name":"Lazio","type":"Region"},
        {"code":"IT-RM","name":"Roma","type":"Metropolitan city","parent":"62"},
        {"code":"ID-JW","name":"Jawa","type":"Geographical unit"},
        {"code":"ID-JK","name":"Jakarta Raya","type":"Capital district","parent":"JW"}
        ]}
        """#

    public static func place(_ id: Int, _ name: String, _ lat: Double, _ lon: Double, _ country: String, _ population: Int, code: String = "PPL") -> String {
        ["\(id)", name, name, "", "\(lat)", "\(lon)", "P", code, country, "", "", "", "", "", "\(population)", "", "", "", ""].joined(separator: "\t")
    }

    public static let cities = [
        place(1, "Bigcity", 1.5, 1.0, "AA", 2_000_000),
        place(2, "Suburbia", 1.55, 1.05, "AA", 20_000),
        place(3, "Smallville", 0.3, 0.3, "AA", 600),
        place(4, "Borderton", 0.3, 2.05, "BB", 100_000),
        place(5, "Enclavia", 0.6, 0.6, "BB", 800),
        place(6, "Quarter", 1.45, 1.0, "AA", 300_000, code: "PPLX"),
        place(7, "Eastport", -16.5, -179.5, "CC", 5_000),
        place(8, "Deeville", 11.0, 10.5, "DD", 3_000),
        place(9, "Eeeville", 11.0, 11.5, "EE", 3_000),
    ].joined(separator: "\n") + "\n"

    public static func postal(_ country: String, _ code: String, _ name: String, _ lat: Double, _ lon: Double) -> String {
        [country, code, name, "", "", "", "", "", "", "\(lat)", "\(lon)", "4"].joined(separator: "\t")
    }

    public static let postalCodes = [
        postal("AA", "A-100", "Bigcity", 1.5, 1.0),
        postal("AA", "A-101", "Bigcity Ost", 1.5, 1.05),
        postal("AA", "A-999", "Mega Versicherung AG", 1.52, 1.02),
        postal("AA", "A-200", "Smallville", 0.3, 0.3),
        postal("BB", "B-1", "Borderton", 0.3, 2.05),
    ].joined(separator: "\n") + "\n"

    public static let continents = "AA\tEU\nBB\tEU\nCC\tOC\nDD\tAS\nEE\tAS\n"

    /// Writes the sources into a fresh directory and builds an index there.
    public static func build(
        postal: Bool = true, keepDominatedPlaces: Bool = false, postalFloors: Bool = true, extraCities: [String] = [],
        extraPostalCodes: [String] = [], extraCountries: [String] = []
    ) throws -> (directory: String, index: String, report: BuildReport) {
        var template = Array("/tmp/geoindex-test-XXXXXX".utf8CString)
        let directory = template.withUnsafeMutableBufferPointer { buffer -> String in
            guard let base = buffer.baseAddress, mkdtemp(base) != nil else { return "/tmp" }
            return String(decoding: buffer.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        FixtureDirectories.removeAtExit(directory)
        try write(collection(countries + extraCountries), to: directory + "/countries.geojson")
        try write(admin1, to: directory + "/admin1.geojson")
        try write(iso, to: directory + "/iso_3166-2.json")
        try write(cities + extraCities.map { $0 + "\n" }.joined(), to: directory + "/cities.txt")
        try write(postalCodes + extraPostalCodes.map { $0 + "\n" }.joined(), to: directory + "/postal.txt")
        try write(continents, to: directory + "/continents.tsv")
        try write("Fixture polygons\ttest\tCC0\n", to: directory + "/sources.tsv")
        let index = directory + (postal ? (postalFloors ? "/fixture.gidx" : "/fixture-nofloors.gidx") : "/fixture-nopostal.gidx")
        let report = try GeoIndexBuilder.build(
            inputs: BuildInputs.fetchedData(directory: directory),
            options: {
                var options = BuildOptions(includePostalCodes: postal, buildDate: "2026-01-01T00:00:00Z")
                options.keepDominatedPlaces = keepDominatedPlaces
                options.postalDistanceFloors = postalFloors
                return options
            }(), outputPath: index)
        return (directory, index, report)
    }

    public static func write(_ text: String, to path: String) throws {
        try writeBytes(Array(text.utf8), to: path)
    }

    public static func writeBytes(_ bytes: [UInt8], to path: String) throws {
        guard let file = fopen(path, "wb") else { throw FixtureError.cannotWrite(path) }
        defer { fclose(file) }
        guard bytes.withUnsafeBytes({ fwrite($0.baseAddress, 1, $0.count, file) }) == bytes.count else {
            throw FixtureError.cannotWrite(path)
        }
    }

    public static func readBytes(_ path: String) throws -> [UInt8] {
        guard let file = fopen(path, "rb") else { throw FixtureError.cannotRead(path) }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = buffer.withUnsafeMutableBytes { fread($0.baseAddress, 1, $0.count, file) }
            if n <= 0 { break }
            bytes.append(contentsOf: buffer[0..<n])
        }
        return bytes
    }

    /// The little-endian u32 at `offset` of an index's bytes.
    public static func u32(_ bytes: [UInt8], _ offset: Int) -> UInt32 {
        (0..<4).reduce(0) { $0 | UInt32(bytes[offset + $1]) << (8 * UInt32($1)) }
    }

    /// The offset of a section's directory entry (`u32 tag, u32 reserved, u64 offset, u64 length`).
    public static func directoryEntry(of section: IndexFormat.Section, in bytes: [UInt8]) -> Int? {
        let sectionCount = Int(u32(bytes, IndexFormat.Header.sectionCount))
        return (0..<sectionCount).map { IndexFormat.headerSize + $0 * IndexFormat.directoryEntrySize }
            .first { u32(bytes, $0) == section.rawValue }
    }

    /// Where a section starts in the file.
    public static func sectionOffset(of section: IndexFormat.Section, in bytes: [UInt8]) -> Int? {
        directoryEntry(of: section, in: bytes).map { Int(u32(bytes, $0 + 8)) | Int(u32(bytes, $0 + 12)) << 32 }
    }

    /// Writes both checksums of an index that a test has changed, so that it opens and verifies
    /// as a file the builder wrote.
    public static func setChecksums(_ bytes: inout [UInt8]) {
        let count = Int(bytes[IndexFormat.Header.sectionCount]) | Int(bytes[IndexFormat.Header.sectionCount + 1]) << 8
        let directoryEnd = IndexFormat.headerSize + count * IndexFormat.directoryEntrySize
        for i in IndexFormat.Header.headerChecksum..<(IndexFormat.Header.headerChecksum + 8) { bytes[i] = 0 }
        var content = Checksum64()
        bytes.withUnsafeBytes { content.update(UnsafeRawBufferPointer(rebasing: $0[directoryEnd...])) }
        for i in 0..<8 { bytes[IndexFormat.Header.contentChecksum + i] = UInt8(truncatingIfNeeded: content.value >> (8 * UInt64(i))) }
        var checksum = Checksum64()
        bytes.withUnsafeBytes { checksum.update(UnsafeRawBufferPointer(rebasing: $0[..<directoryEnd])) }
        for i in 0..<8 { bytes[IndexFormat.Header.headerChecksum + i] = UInt8(truncatingIfNeeded: checksum.value >> (8 * UInt64(i))) }
    }

    enum FixtureError: Error {
        case cannotWrite(String)
        case cannotRead(String)
    }
}

/// The directories `Fixture.build` made, removed when the test process exits: a test keeps its
/// index mapped until it ends, so none removes its own.
private enum FixtureDirectories {
    static let made = Mutex<[String]>([])

    static func removeAtExit(_ directory: String) {
        guard directory != "/tmp" else { return }
        let first = made.withLock { made in
            made.append(directory)
            return made.count == 1
        }
        if first {
            atexit {
                for directory in FixtureDirectories.made.withLock({ $0 }) {
                    try? FileManager.default.removeItem(atPath: directory)
                }
            }
        }
    }
}
