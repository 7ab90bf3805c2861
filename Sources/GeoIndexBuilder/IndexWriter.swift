import GeoIndex

/// Assembles sections into the final file: header, directory, 8-byte-aligned sections, checksums.
struct IndexWriter {
    private var sections: [(tag: IndexFormat.Section, bytes: [UInt8])] = []

    mutating func add(_ tag: IndexFormat.Section, _ bytes: [UInt8]) {
        sections.append((tag, bytes))
    }

    func serialise() -> [UInt8] {
        var out = ByteWriter()
        out.bytes(IndexFormat.magic)
        out.u32(IndexFormat.version)
        out.u32(UInt32(sections.count))
        out.u64(0)  // file size, patched
        out.u64(0)  // header checksum, patched
        out.u64(0)  // content checksum, patched
        out.align(to: IndexFormat.headerSize)
        let directoryEnd = IndexFormat.headerSize + sections.count * IndexFormat.directoryEntrySize
        var offset = (directoryEnd + 7) / 8 * 8
        var placements: [(UInt64, UInt64)] = []
        for section in sections {
            placements.append((UInt64(offset), UInt64(section.bytes.count)))
            offset = (offset + section.bytes.count + 7) / 8 * 8
        }
        for (section, placement) in zip(sections, placements) {
            out.u32(section.tag.rawValue)
            out.u32(0)
            out.u64(placement.0)
            out.u64(placement.1)
        }
        for section in sections {
            out.align(to: 8)
            out.bytes(section.bytes)
        }
        out.align(to: 8)
        var data = out.data
        let fileSize = UInt64(data.count)
        withUnsafeBytes(of: fileSize.littleEndian) { bytes in
            for i in 0..<8 { data[IndexFormat.Header.fileSize + i] = bytes[i] }
        }
        // Content first: the header checksum covers the content checksum field.
        var content = Checksum64()
        data.withUnsafeBytes { content.update(UnsafeRawBufferPointer(rebasing: $0[directoryEnd...])) }
        withUnsafeBytes(of: content.value.littleEndian) { bytes in
            for i in 0..<8 { data[IndexFormat.Header.contentChecksum + i] = bytes[i] }
        }
        var header = Checksum64()
        data.withUnsafeBytes { header.update(UnsafeRawBufferPointer(rebasing: $0[..<directoryEnd])) }
        withUnsafeBytes(of: header.value.littleEndian) { bytes in
            for i in 0..<8 { data[IndexFormat.Header.headerChecksum + i] = bytes[i] }
        }
        return data
    }
}
