import GeoIndex
import Testing
import TestSupport

/// A point grid finer than its u32 cell keys can number (a crafted cell size just above the
/// 0.001-degree floor, in a correctly signed file) is refused at open. It used to open and then
/// trap in the first lookup near its cells, taking the daemon down at every start.
@Suite struct PointGridKeySpaceTests {
    @Test func gridWithMoreCellsThanKeysIsRefused() throws {
        let built = try Fixture.build()
        var bytes = try Fixture.readBytes(built.index)
        let entry = try #require(Fixture.directoryEntry(of: .majorPlaces, in: bytes))
        // 359,640 x 179,820 cells: the keys of most rows overflow u32. One cell, one record.
        let cellSize = 0.001001
        let rows = UInt32((180 / cellSize).rounded())
        var section: [UInt8] = []
        append(cellSize.bitPattern, to: &section)
        for field in [UInt32((360 / cellSize).rounded()), rows, 1, 1, UInt32(IndexFormat.placeRecordSize), 0, 5, 0, 1] {
            append(field, to: &section)
        }
        section += [UInt8](repeating: 0, count: Int(rows) * 4 + 4 + IndexFormat.placeRecordSize)
        while bytes.count % 8 != 0 { bytes.append(0) }
        put(UInt64(bytes.count), at: entry + 8, in: &bytes)
        put(UInt64(section.count), at: entry + 16, in: &bytes)
        bytes += section
        sign(&bytes)
        let path = built.directory + "/fine-grid.gidx"
        try Fixture.writeBytes(bytes, to: path)
        #expect(throws: GeoIndexError.self) { try GeoIndexReader(path: path) }
    }

    func append<T: FixedWidthInteger>(_ value: T, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { bytes += $0 }
    }

    func put(_ value: UInt64, at offset: Int, in bytes: inout [UInt8]) {
        for i in 0..<8 { bytes[offset + i] = UInt8(truncatingIfNeeded: value >> (8 * UInt64(i))) }
    }

    /// The size field and both checksums, as the builder writes them.
    func sign(_ bytes: inout [UInt8]) {
        put(UInt64(bytes.count), at: IndexFormat.Header.fileSize, in: &bytes)
        let directoryEnd = IndexFormat.headerSize + Int(Fixture.u32(bytes, IndexFormat.Header.sectionCount)) * IndexFormat.directoryEntrySize
        var content = Checksum64()
        bytes.withUnsafeBytes { content.update(UnsafeRawBufferPointer(rebasing: $0[directoryEnd...])) }
        put(content.value, at: IndexFormat.Header.contentChecksum, in: &bytes)
        put(0, at: IndexFormat.Header.headerChecksum, in: &bytes)
        var header = Checksum64()
        bytes.withUnsafeBytes { header.update(UnsafeRawBufferPointer(rebasing: $0[..<directoryEnd])) }
        put(header.value, at: IndexFormat.Header.headerChecksum, in: &bytes)
    }
}
