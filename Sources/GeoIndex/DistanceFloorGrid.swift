/// A coarse grid of distance floors for a point grid: for every cell, a distance that no point
/// of the set is closer than, from anywhere in the cell. A nearest search far from every point
/// (tundra, desert, the interior of a country with few postal codes) then ends at once instead
/// of widening ring by ring to its cut-off, and a search elsewhere starts at the floor.
///
/// Section layout: `f64 cellSize, u32 columns, u32 rows, u32 unitMeters, u32 reserved`, then
/// `rows * columns` u8 floors in units of `unitMeters` (row 0 at -90 degrees, column 0 at -180;
/// 255 means at least 255 units). Floors are in the metres of `PointGrid.forEach`.
struct DistanceFloorGrid: Sendable {
    static let headerSize = 24
    let cellSize: Double
    let columns: Int
    let rows: Int
    let unitMeters: Double
    private let floors: ByteView

    init?(section: ByteView) {
        guard let cellSize = section.f64(0), let columns = section.u32(8), let rows = section.u32(12),
            let unit = section.u32(16), cellSize.isFinite, cellSize >= 0.01, cellSize <= 180, unit > 0,
            Int(columns) == Int((360 / cellSize).rounded()), Int(rows) == Int((180 / cellSize).rounded()),
            let floors = section.slice(Self.headerSize, Int(columns) * Int(rows))
        else { return nil }
        self.cellSize = cellSize
        self.columns = Int(columns)
        self.rows = Int(rows)
        self.unitMeters = Double(unit)
        self.floors = floors
    }

    /// No point of the set is nearer than this to the given point (finite, in range).
    @inline(__always)
    func floorMeters(latitude: Double, longitude: Double) -> Double {
        let row = min(max(Int(((latitude + 90) / cellSize).rounded(.down)), 0), rows - 1)
        let column = min(max(Int(((longitude + 180) / cellSize).rounded(.down)), 0), columns - 1)
        guard let floor = floors.u8(row * columns + column) else { return 0 }
        return Double(floor) * unitMeters
    }
}
