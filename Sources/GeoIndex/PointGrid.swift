#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Points (places, postal centroids) bucketed into a sparse lat/lon grid: only occupied cells
/// are stored, as sorted cell keys (`row * columns + column`) with the index of their first record.
///
/// Section layout: `f64 cellSize, u32 columns, u32 rows, u32 cellCount, u32 recordCount,
/// u32 recordSize, u32 chunkColumns`, then `cellCount` u32 keys, `cellCount + 1` u32 starts,
/// `rows + 1` u32 row starts (index of the first key of each row, so a search stays in its row),
/// and the records. Every record begins with its position in the cell as two u8 fractions;
/// within a cell records are sorted by latitude, so a narrow window reads only a stripe of it.
/// With `chunkColumns` > 0 a chunk directory follows: `u32 firstRow, u32 rowCount`, then per
/// row from `firstRow` (the first occupied one) and per run of `chunkColumns` columns, a u16
/// count of the row's keys before the run, so a search reads one run's keys instead of the whole
/// row's (`chunkColumns` 0: no directory; readers that predate it ignore it).
package struct PointGrid: Sendable {
    static let headerSize = 32
    /// Cells with at most this many records are scanned without a binary search.
    static let linearScanLimit = 64

    let cellSize: Double
    let columns: Int
    let rows: Int
    let recordSize: Int
    private let keys: ByteView
    private let starts: ByteView
    private let rowStarts: ByteView
    let records: ByteView
    private let cellCount: Int
    private let recordCount: Int
    /// Nil without a usable directory: then the search covers whole rows (slower, same answers).
    private let chunks: ChunkDirectory?

    init?(section: ByteView, expectedRecordSize: Int) {
        guard let cellSize = section.f64(0), let columns = section.u32(8), let rows = section.u32(12),
            let cellCount = section.u32(16), let recordCount = section.u32(20), let recordSize = section.u32(24),
            cellSize.isFinite, cellSize > 0.001, cellSize <= 180, Int(recordSize) == expectedRecordSize,
            CellGeometry.gridSize(cellSize: cellSize) == (Int(columns), Int(rows)),
            // Cell keys are u32: a finer grid (a crafted cell size) would overflow them in lookups.
            Int(columns) * Int(rows) <= Int(UInt32.max) + 1
        else { return nil }
        let keyBytes = Int(cellCount) * 4
        guard let keys = section.slice(Self.headerSize, keyBytes),
            let starts = section.slice(Self.headerSize + keyBytes, keyBytes + 4),
            let rowStarts = section.slice(Self.headerSize + 2 * keyBytes + 4, Int(rows) * 4 + 4),
            let records = section.slice(Self.headerSize + 2 * keyBytes + 8 + Int(rows) * 4, Int(recordCount) * Int(recordSize))
        else { return nil }
        self.cellSize = cellSize
        self.columns = Int(columns)
        self.rows = Int(rows)
        self.recordSize = Int(recordSize)
        self.keys = keys
        self.starts = starts
        self.rowStarts = rowStarts
        self.records = records
        self.cellCount = Int(cellCount)
        self.recordCount = Int(recordCount)
        chunks = ChunkDirectory(
            section: section, at: Self.headerSize + 2 * keyBytes + 8 + Int(rows) * 4 + Int(recordCount) * Int(recordSize),
            columnsPerChunk: Int(section.u32(28) ?? 0), columns: Int(columns), rows: Int(rows))
    }

    /// The longitude scale of a search: at least 1% of the equator's, so that a window near a pole
    /// stays bounded. The distance floors are built with the same scale.
    @inline(__always)
    package static func searchMetersPerDegreeLongitude(_ metersPerDegreeLongitude: Double) -> Double {
        max(metersPerDegreeLongitude, CellGeometry.metersPerDegreeLongitudeAtEquator * 0.01)
    }

    /// South-west corner of a cell.
    @inline(__always)
    package static func cellOrigin(row: Int, column: Int, cellSize: Double) -> (latitude: Double, longitude: Double) {
        (Double(row) * cellSize - 90, Double(column) * cellSize - 180)
    }

    /// A record's coordinate from its cell's origin and its quantised fraction; the builder
    /// computes what the reader will see with the same function.
    @inline(__always)
    package static func decode(_ fraction: UInt8, from origin: Double, cellSize: Double) -> Double {
        origin + Double(fraction) / IndexFormat.quantisationSteps * cellSize
    }

    /// Calls `body(recordOffset, metres)` for every record within `radius` metres of the point.
    @inline(__always)
    func forEach(
        near latitude: Double, _ longitude: Double, radius: Double, metersPerDegreeLongitude: Double, _ body: (Int, Double) -> Void
    ) {
        let metersY = CellGeometry.metersPerDegreeLatitude
        let metersX = Self.searchMetersPerDegreeLongitude(metersPerDegreeLongitude)
        let deltaLat = radius / metersY
        let deltaLon = radius / metersX
        let firstRow = max(Int(((latitude - deltaLat + 90) / cellSize).rounded(.down)), 0)
        let lastRow = min(Int(((latitude + deltaLat + 90) / cellSize).rounded(.down)), rows - 1)
        guard firstRow <= lastRow else { return }
        let firstColumn = Int(((longitude - deltaLon + 180) / cellSize).rounded(.down))
        let lastColumn = Int(((longitude + deltaLon + 180) / cellSize).rounded(.down))
        let radius2 = radius * radius
        for row in firstRow...lastRow {
            if lastColumn - firstColumn + 1 >= columns {
                visit(row: row, from: 0, to: columns - 1, latitude, longitude, metersX, metersY, radius2, body)
                continue
            }
            // The window may cross the antimeridian: split it into at most two column runs.
            let start = (firstColumn % columns + columns) % columns
            let end = (lastColumn % columns + columns) % columns
            if start <= end {
                visit(row: row, from: start, to: end, latitude, longitude, metersX, metersY, radius2, body)
            } else {
                visit(row: row, from: start, to: columns - 1, latitude, longitude, metersX, metersY, radius2, body)
                visit(row: row, from: 0, to: end, latitude, longitude, metersX, metersY, radius2, body)
            }
        }
    }

    @inline(__always)
    private func visit(
        row: Int, from firstColumn: Int, to lastColumn: Int, _ latitude: Double, _ longitude: Double,
        _ metersX: Double, _ metersY: Double, _ radius2: Double, _ body: (Int, Double) -> Void
    ) {
        let firstKey = UInt32(row * columns + firstColumn)
        let lastKey = UInt32(row * columns + lastColumn)
        guard let rowFirst = rowStarts.u32(row * 4), let rowEnd = rowStarts.u32(row * 4 + 4), rowFirst <= rowEnd else { return }
        var low = Int(rowFirst)
        var high = min(Int(rowEnd), cellCount)
        chunks?.narrow(row: row, firstColumn: firstColumn, rowFirst: Int(rowFirst), low: &low, high: &high)
        while low < high {
            let mid = (low + high) >> 1
            guard let key = keys.u32(mid * 4) else { return }
            if key < firstKey { low = mid + 1 } else { high = mid }
        }
        var cell = low
        while cell < cellCount, let key = keys.u32(cell * 4), key <= lastKey {
            guard let start = starts.u32(cell * 4), let end = starts.u32(cell * 4 + 4), start <= end,
                Int(end) <= recordCount
            else { return }
            let (originLat, originLon) = Self.cellOrigin(row: Int(key) / columns, column: Int(key) % columns, cellSize: cellSize)
            let stripeLow = (latitude - radius2.squareRoot() / metersY - originLat) / cellSize * IndexFormat.quantisationSteps
            let stripeHigh = (latitude + radius2.squareRoot() / metersY - originLat) / cellSize * IndexFormat.quantisationSteps
            var first = Int(start)
            // A binary search costs a dependent cache miss per step; a small cell is read faster
            // front to back (the loop below skips the records south of the stripe).
            if stripeLow > 0 && Int(end) - first > Self.linearScanLimit {
                var high = Int(end)
                while first < high {
                    let mid = (first + high) >> 1
                    guard let fraction = records.u8(mid * recordSize) else { return }
                    if Double(fraction) < stripeLow { first = mid + 1 } else { high = mid }
                }
            }
            for record in first..<Int(end) {
                let offset = record * recordSize
                guard let fractionLat = records.u8(offset), let fractionLon = records.u8(offset + 1) else { return }
                if Double(fractionLat) > stripeHigh { break }
                if Double(fractionLat) < stripeLow { continue }
                let pointLat = Self.decode(fractionLat, from: originLat, cellSize: cellSize)
                let pointLon = Self.decode(fractionLon, from: originLon, cellSize: cellSize)
                var deltaLon = pointLon - longitude
                if deltaLon > 180 { deltaLon -= 360 } else if deltaLon < -180 { deltaLon += 360 }
                let dx = deltaLon * metersX
                let dy = (pointLat - latitude) * metersY
                let distance2 = dx * dx + dy * dy
                if distance2 <= radius2 { body(offset, distance2.squareRoot()) }
            }
            cell += 1
        }
    }
}

/// The chunk directory of a point grid (layout in `PointGrid`): for each row from `firstRow`
/// and each run of `columnsPerChunk` columns, how many of the row's keys come before the run.
private struct ChunkDirectory: Sendable {
    let columnsPerChunk: Int
    let chunksPerRow: Int
    let firstRow: Int
    let entries: ByteView

    init?(section: ByteView, at start: Int, columnsPerChunk: Int, columns: Int, rows: Int) {
        guard columnsPerChunk > 0, columnsPerChunk <= columns, let firstRow = section.u32(start),
            let rowCount = section.u32(start + 4), Int(firstRow) + Int(rowCount) <= rows
        else { return nil }
        let chunksPerRow = (columns + columnsPerChunk - 1) / columnsPerChunk
        guard let entries = section.slice(start + 8, Int(rowCount) * chunksPerRow * 2) else { return nil }
        self.columnsPerChunk = columnsPerChunk
        self.chunksPerRow = chunksPerRow
        self.firstRow = Int(firstRow)
        self.entries = entries
    }

    /// Narrows `low..<high` (the row's keys, from `rowFirst`) to those from the run holding
    /// `firstColumn` to the end of that run. Rows outside the directory (none of them has keys)
    /// stay whole.
    @inline(__always)
    func narrow(row: Int, firstColumn: Int, rowFirst: Int, low: inout Int, high: inout Int) {
        guard row >= firstRow else { return }
        let chunk = firstColumn / columnsPerChunk
        let entry = ((row - firstRow) * chunksPerRow + chunk) * 2
        guard let before = entries.u16(entry) else { return }
        low = min(rowFirst + Int(before), high)
        if chunk + 1 < chunksPerRow, let next = entries.u16(entry + 2) {
            high = max(min(rowFirst + Int(next), high), low)
        }
    }
}
