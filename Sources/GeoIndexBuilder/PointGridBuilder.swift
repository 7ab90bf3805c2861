import GeoIndex

/// Builds a sparse point grid section (layout in `PointGrid` of the reader).
struct PointGridBuilder {
    struct Entry {
        var latitude: Double
        var longitude: Double
        /// The record after the two position fractions.
        var payload: [UInt8]
    }

    /// Columns per entry of the chunk directory (a search reads one chunk's keys, not its row's).
    static let chunkColumns = 128

    let cellSize: Double
    private var entries: [(key: UInt32, fractionLat: UInt8, fractionLon: UInt8, payload: [UInt8])] = []

    init(cellSize: Double) {
        self.cellSize = cellSize
    }

    var columns: Int { Int((360 / cellSize).rounded()) }
    var rows: Int { Int((180 / cellSize).rounded()) }
    var count: Int { entries.count }

    mutating func add(latitude: Double, longitude: Double, payload: [UInt8]) {
        let row = min(max(Int(((latitude + 90) / cellSize).rounded(.down)), 0), rows - 1)
        var column = Int(((longitude + 180) / cellSize).rounded(.down))
        column = (column % columns + columns) % columns
        let originLat = Double(row) * cellSize - 90
        let originLon = Double(column) * cellSize - 180
        let steps = IndexFormat.quantisationSteps
        let fractionLat = UInt8(min(max(((latitude - originLat) / cellSize * steps).rounded(), 0), steps))
        let fractionLon = UInt8(min(max(((longitude - originLon) / cellSize * steps).rounded(), 0), steps))
        entries.append((UInt32(row * columns + column), fractionLat, fractionLon, payload))
    }

    /// The positions as the reader decodes them (cell origin plus the quantised fractions).
    var decodedPositions: [(latitude: Double, longitude: Double)] {
        let steps = IndexFormat.quantisationSteps
        return entries.map { entry in
            let originLat = Double(Int(entry.key) / columns) * cellSize - 90
            let originLon = Double(Int(entry.key) % columns) * cellSize - 180
            return (
                originLat + Double(entry.fractionLat) / steps * cellSize, originLon + Double(entry.fractionLon) / steps * cellSize
            )
        }
    }

    func section(recordSize: Int) -> [UInt8] {
        let sorted = entries.enumerated().sorted {
            ($0.element.key, $0.element.fractionLat, $0.offset) < ($1.element.key, $1.element.fractionLat, $1.offset)
        }.map(\.element)
        var keys: [UInt32] = []
        var starts: [UInt32] = []
        for (index, entry) in sorted.enumerated() where keys.last != entry.key {
            keys.append(entry.key)
            starts.append(UInt32(index))
        }
        starts.append(UInt32(sorted.count))
        var out = ByteWriter()
        out.f64(cellSize)
        out.u32(UInt32(columns))
        out.u32(UInt32(rows))
        out.u32(UInt32(keys.count))
        out.u32(UInt32(sorted.count))
        out.u32(UInt32(recordSize))
        out.u32(UInt32(Self.chunkColumns))
        for key in keys { out.u32(key) }
        for start in starts { out.u32(start) }
        var keyIndex = 0
        for row in 0...rows {
            while keyIndex < keys.count, Int(keys[keyIndex]) / columns < row { keyIndex += 1 }
            out.u32(UInt32(keyIndex))
        }
        for entry in sorted {
            out.u8(entry.fractionLat)
            out.u8(entry.fractionLon)
            out.bytes(entry.payload)
        }
        // Per occupied row and chunk of columns, how many of the row's keys come before the chunk.
        let chunksPerRow = (columns + Self.chunkColumns - 1) / Self.chunkColumns
        let firstRow = keys.first.map { Int($0) / columns } ?? 0
        let lastRow = keys.last.map { Int($0) / columns } ?? -1
        out.u32(UInt32(firstRow))
        out.u32(UInt32(lastRow - firstRow + 1))
        var rowFirstKey = 0
        for row in firstRow..<(lastRow + 1) {
            var keyIndex = rowFirstKey
            for chunk in 0..<chunksPerRow {
                let chunkStart = UInt32(row * columns + chunk * Self.chunkColumns)
                while keyIndex < keys.count, keys[keyIndex] < chunkStart { keyIndex += 1 }
                out.u16(UInt16(keyIndex - rowFirstKey))
            }
            while keyIndex < keys.count, Int(keys[keyIndex]) / columns <= row { keyIndex += 1 }
            rowFirstKey = keyIndex
        }
        return out.data
    }
}
