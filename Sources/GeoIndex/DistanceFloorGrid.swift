/// A coarse grid of distance floors for a point grid: for every cell, a distance that no point
/// of the set is closer than, from anywhere in the cell. A nearest search far from every point
/// (tundra, desert, the interior of a country with few postal codes) then ends at once instead
/// of widening ring by ring to its cut-off, and a search elsewhere starts at the floor.
///
/// Section layout: `f64 cellSize, u32 columns, u32 rows, u32 unitMeters, u32 firstRow,
/// u32 storedRows, u32 reserved`, then `storedRows * columns` u8 floors in units of `unitMeters`
/// from row `firstRow` (row 0 at -90 degrees, column 0 at -180; 255 means at least 255 units,
/// as does every row not stored). Floors are in the metres of `PointGrid.forEach`.
package struct DistanceFloorGrid: Sendable {
    static let headerSize = 32
    /// The floor of rows not stored, and the largest a cell holds: at least this many units.
    package static let saturatedUnits = UInt8.max
    let cellSize: Double
    let columns: Int
    let rows: Int
    let unitMeters: Double
    private let firstRow: Int
    private let storedRows: Int
    private let floors: ByteView

    init?(section: ByteView) {
        guard let cellSize = section.f64(0), let columns = section.u32(8), let rows = section.u32(12),
            let unit = section.u32(16), let firstRow = section.u32(20), let storedRows = section.u32(24),
            cellSize.isFinite, cellSize >= 0.01, cellSize <= 180, unit > 0,
            CellGeometry.gridSize(cellSize: cellSize) == (Int(columns), Int(rows)),
            Int(firstRow) + Int(storedRows) <= Int(rows),
            let floors = section.slice(Self.headerSize, Int(columns) * Int(storedRows))
        else { return nil }
        self.firstRow = Int(firstRow)
        self.storedRows = Int(storedRows)
        self.cellSize = cellSize
        self.columns = Int(columns)
        self.rows = Int(rows)
        self.unitMeters = Double(unit)
        self.floors = floors
    }

    /// No point of the set is nearer than this to the given point (finite, in range).
    @inline(__always)
    func floorMeters(latitude: Double, longitude: Double) -> Double {
        let cell = CellGeometry.gridCell(latitude: latitude, longitude: longitude, cellSize: cellSize, columns: columns, rows: rows)
        let row = cell.row - firstRow
        guard row >= 0, row < storedRows else { return Double(Self.saturatedUnits) * unitMeters }
        guard let floor = floors.u8(row * columns + cell.column) else { return 0 }
        return Double(floor) * unitMeters
    }
}
