#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import GeoIndex
import GeoPlaces
import TestSupport

/// The geocoder index: `GeoIndexReader(path:)` (the memory-mapped open with its header, checksum
/// and section checks) on a file with the fuzzed bytes, then lookups that reach every layer and
/// grid of the fixture index, the metadata, and the whole-file verification.
///
/// The first byte is a mode, the rest the file. With bit 0 set the file is re-signed before it
/// is written: its size field and both checksums are recomputed, as a forger would, so the
/// mutations reach the section parsing and the lookups instead of stopping at the header
/// checksum. With bit 0 clear the bytes are written as they are (the checks themselves). With
/// bit 7 set the file is cut short after the open, as a copy over it in place does, to a length
/// the other bits choose: the lookups then read past its end (the mapping guard's zeros), and a
/// reader that says it is intact must have read nothing past it.
struct IndexReaderFuzz: FuzzHarness {
    let path = Scratch.path("fuzzed.gidx")

    init() throws {}

    /// Points of the fixture (see TestSupport's GeoIndexFixture): inside each country, region
    /// and enclave, on borders and coasts, either side of the antimeridian, in the sea, at the
    /// poles and the edges of the coordinate range, and near every place and postal code.
    static let points: [(latitude: Double, longitude: Double)] = [
        (1.5, 1.0), (1.55, 1.05), (0.3, 0.3), (0.6, 0.6), (0.3, 2.05), (0.3, 1.98), (1.0, 1.9), (2.004, 1.0),
        (11.0, 10.5), (11.0, 11.5), (11.0, 11.0), (-16.5, 179.95), (-16.5, -179.5), (-16.5, 180), (20.5, 20.5),
        (30.5, 30.5), (-45, -120), (90, 0), (-90, 180), (0, 0), (89.9999, -180), (1.52, 1.02),
    ]

    /// Splits `input` into its mode and the file, re-signs the file when the mode says so and
    /// writes it to `path`; nil for an empty input. Shared with the C interface's harness.
    static func writeFile(of input: [UInt8], to path: String) -> (mode: UInt8, bytes: [UInt8])? {
        guard let mode = input.first else { return nil }
        var bytes = Array(input.dropFirst())
        if mode & 1 == 1 { sign(&bytes) }
        do {
            try Scratch.write(bytes, to: path)
        } catch {
            fatalError("index harness: \(error)")
        }
        return (mode, bytes)
    }

    func run(_ input: [UInt8]) {
        guard let (mode, bytes) = Self.writeFile(of: input, to: path) else { return }
        // The reader must be gone before the next input rewrites the file it maps.
        guard let reader = try? GeoIndexReader(path: path) else { return }
        let shrinks = mode & 0x80 != 0
        if shrinks { Self.shrink(path, of: bytes.count, mode: mode) }
        // What the daemon reads of it for the index version (IndexGeocoder.load).
        let info = reader.info
        _ = "format \(info.formatVersion) built \(info.buildDate) size \(info.fileSize) \(info.counts.count) \(info.attribution)"
        for point in Self.points {
            _ = reader.place(latitude: point.latitude, longitude: point.longitude)
        }
        // One more point chosen by the mode's other bits, around the fixture's features.
        let steps = Double((mode & 0x7F) >> 1)
        _ = reader.place(latitude: -20 + steps * 0.33, longitude: -3 + steps * 0.17)
        _ = try? reader.verifyContents()
        // verifyContents read every byte: past an end that moved, the reader must know it.
        if shrinks, Self.shrunkPastAPage(of: bytes.count, mode: mode), reader.isIntact {
            fatalError("index harness: the file was cut short under the reader and every byte read, yet it says it is intact")
        }
    }

    /// The length the file is cut to after the open: a fraction of it, in 64ths, from the mode.
    static func shrunkLength(of count: Int, mode: UInt8) -> Int {
        count * Int((mode & 0x7F) >> 1) / 64
    }

    /// Whether the cut removed a whole page's worth past the new end's page (what a read faults on).
    static func shrunkPastAPage(of count: Int, mode: UInt8) -> Bool {
        let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))
        let firstMissingPage = (shrunkLength(of: count, mode: mode) + pageSize - 1) / pageSize * pageSize
        return count > firstMissingPage
    }

    static func shrink(_ path: String, of count: Int, mode: UInt8) {
        guard truncate(path, off_t(shrunkLength(of: count, mode: mode))) == 0 else {
            fatalError("index harness: truncate: errno \(errno)")
        }
    }

    /// Sets the size field and the content and header checksums the way the builder does, with
    /// every offset clamped to the bytes (a fuzzed section count can point anywhere).
    static func sign(_ bytes: inout [UInt8]) {
        guard bytes.count >= IndexFormat.headerSize else { return }
        store(UInt64(bytes.count), at: IndexFormat.Header.fileSize, in: &bytes)
        let sectionCount = Int(bytes[IndexFormat.Header.sectionCount]) | Int(bytes[IndexFormat.Header.sectionCount + 1]) << 8
            | Int(bytes[IndexFormat.Header.sectionCount + 2]) << 16 | Int(bytes[IndexFormat.Header.sectionCount + 3]) << 24
        let directoryEnd = min(IndexFormat.headerSize + min(sectionCount, 64) * IndexFormat.directoryEntrySize, bytes.count)
        var content = Checksum64()
        bytes.withUnsafeBytes { content.update(UnsafeRawBufferPointer(rebasing: $0[directoryEnd...])) }
        store(content.value, at: IndexFormat.Header.contentChecksum, in: &bytes)
        store(0, at: IndexFormat.Header.headerChecksum, in: &bytes)
        var header = Checksum64()
        bytes.withUnsafeBytes { header.update(UnsafeRawBufferPointer(rebasing: $0[..<directoryEnd])) }
        store(header.value, at: IndexFormat.Header.headerChecksum, in: &bytes)
    }

    private static func store(_ value: UInt64, at offset: Int, in bytes: inout [UInt8]) {
        for i in 0..<8 {
            bytes[offset + i] = UInt8(truncatingIfNeeded: value >> (8 * UInt64(i)))
        }
    }

    /// The fixture index built by GeoIndexBuilder from the tests' sources, with and without
    /// postal codes, each as it is (mode 0) and to be re-signed (mode 1).
    static func seeds() throws -> [(name: String, bytes: [UInt8])] {
        var seeds: [(name: String, bytes: [UInt8])] = []
        for postal in [true, false] {
            let built = try Fixture.build(postal: postal)
            defer { Scratch.remove(built.directory) }
            let index = try Fixture.readBytes(built.index)
            let name = postal ? "fixture" : "fixture-nopostal"
            seeds.append(("\(name)-plain.bin", [0] + index))
            seeds.append(("\(name)-signed.bin", [1] + index))
            // Cut to a quarter and to nothing after the open.
            seeds.append(("\(name)-shrunk-quarter.bin", [UInt8(0x80 | 32)] + index))
            seeds.append(("\(name)-shrunk-empty.bin", [UInt8(0x80)] + index))
        }
        return seeds
    }
}
