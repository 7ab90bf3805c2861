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

    var columns: Int { CellGeometry.gridSize(cellSize: cellSize).columns }
    var rows: Int { CellGeometry.gridSize(cellSize: cellSize).rows }
    var count: Int { entries.count }

    /// A position as the grid stores it: its cell key and its quantised place in the cell.
    struct Position: Hashable {
        var key: UInt32
        var fractionLat: UInt8
        var fractionLon: UInt8
    }

    func position(latitude: Double, longitude: Double) -> Position {
        let row = min(max(Int(((latitude + 90) / cellSize).rounded(.down)), 0), rows - 1)
        var column = Int(((longitude + 180) / cellSize).rounded(.down))
        column = (column % columns + columns) % columns
        let (originLat, originLon) = PointGrid.cellOrigin(row: row, column: column, cellSize: cellSize)
        let steps = IndexFormat.quantisationSteps
        let fractionLat = UInt8(min(max(((latitude - originLat) / cellSize * steps).rounded(), 0), steps))
        let fractionLon = UInt8(min(max(((longitude - originLon) / cellSize * steps).rounded(), 0), steps))
        return Position(key: UInt32(row * columns + column), fractionLat: fractionLat, fractionLon: fractionLon)
    }

    mutating func add(latitude: Double, longitude: Double, payload: [UInt8]) {
        add(at: position(latitude: latitude, longitude: longitude), payload: payload)
    }

    mutating func add(at position: Position, payload: [UInt8]) {
        entries.append((position.key, position.fractionLat, position.fractionLon, payload))
    }

    /// The positions as the reader decodes them.
    var decodedPositions: [(latitude: Double, longitude: Double)] {
        entries.map { entry in
            let origin = PointGrid.cellOrigin(row: Int(entry.key) / columns, column: Int(entry.key) % columns, cellSize: cellSize)
            return (
                PointGrid.decode(entry.fractionLat, from: origin.latitude, cellSize: cellSize),
                PointGrid.decode(entry.fractionLon, from: origin.longitude, cellSize: cellSize)
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
        // The index of each row's first key (+1 sentinel): written, and used by the directory below.
        var rowStarts: [Int] = []
        var keyIndex = 0
        for row in 0...rows {
            while keyIndex < keys.count, Int(keys[keyIndex]) / columns < row { keyIndex += 1 }
            rowStarts.append(keyIndex)
        }
        for start in rowStarts { out.u32(UInt32(start)) }
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
        for row in firstRow..<(lastRow + 1) {
            var keyIndex = rowStarts[row]
            for chunk in 0..<chunksPerRow {
                let chunkStart = UInt32(row * columns + chunk * Self.chunkColumns)
                while keyIndex < rowStarts[row + 1], keys[keyIndex] < chunkStart { keyIndex += 1 }
                out.u16(UInt16(keyIndex - rowStarts[row]))
            }
        }
        return out.data
    }
}
