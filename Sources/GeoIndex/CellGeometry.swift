#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An axis-aligned rectangle in degrees (x = longitude, y = latitude).
public struct DegreeRect: Sendable, Equatable {
    public var minX: Double
    public var minY: Double
    public var maxX: Double
    public var maxY: Double

    public init(minX: Double, minY: Double, maxX: Double, maxY: Double) {
        self.minX = minX
        self.minY = minY
        self.maxX = maxX
        self.maxY = maxY
    }

    @inline(__always)
    public func expanded(byX dx: Double, y dy: Double) -> DegreeRect {
        DegreeRect(minX: minX - dx, minY: minY - dy, maxX: maxX + dx, maxY: maxY + dy)
    }

    /// Quadrant `index` (0 = south-west, 1 = south-east, 2 = north-west, 3 = north-east).
    @inline(__always)
    public func quadrant(_ index: Int) -> DegreeRect {
        let midX = (minX + maxX) * 0.5
        let midY = (minY + maxY) * 0.5
        return DegreeRect(
            minX: index & 1 == 0 ? minX : midX, minY: index & 2 == 0 ? minY : midY,
            maxX: index & 1 == 0 ? midX : maxX, maxY: index & 2 == 0 ? midY : maxY)
    }
}

/// The cell arithmetic the builder and reader must agree on bit for bit.
///
/// Each area-layer cell stores its polygons clipped to the cell grown by a margin, so a point's
/// distance to an edge is exact up to the margin (the boundary margin) without
/// looking at neighbouring cells. The longitude margin widens towards the poles so the margin
/// is at least `marginLatitude` degrees of ground distance everywhere except the polar rows.
public enum CellGeometry {
    public static let metersPerDegreeLatitude = 110_574.0
    public static let metersPerDegreeLongitudeAtEquator = 111_320.0

    @inline(__always)
    public static func rootRect(row: Int, column: Int) -> DegreeRect {
        DegreeRect(minX: Double(column - 180), minY: Double(row - 90), maxX: Double(column - 179), maxY: Double(row - 89))
    }

    @inline(__always)
    public static func longitudeMargin(row: Int, marginLatitude: Double) -> Double {
        let poleward = max(abs(Double(row - 90)), abs(Double(row - 89)))
        let scale = max(cos(poleward * Double.pi / 180), 0.1)
        return marginLatitude / scale
    }

    /// Latitude margin of a cell at `depth` below a root cell: a fixed part or a share of the
    /// cell's height, so deep cells stay small.
    @inline(__always)
    public static func latitudeMargin(depth: Int, absolute: Double, relative: Double) -> Double {
        max(absolute, relative / Double(1 << depth))
    }

    /// Quantisation steps of a leaf: its latitude span in units of `resolution` degrees, at most
    /// `IndexFormat.leafSteps`. A fixed ground resolution keeps deltas short in deep cells.
    @inline(__always)
    public static func leafSteps(latitudeSpan: Double, resolution: Double) -> Double {
        guard resolution > 0 else { return IndexFormat.leafSteps }
        return min(IndexFormat.leafSteps, max(64, (latitudeSpan / resolution).rounded(.down)))
    }

    /// Columns and rows of a grid of `cellSize`-degree cells (point grids, distance floors).
    @inline(__always)
    package static func gridSize(cellSize: Double) -> (columns: Int, rows: Int) {
        (Int((360 / cellSize).rounded()), Int((180 / cellSize).rounded()))
    }

    /// The cell of such a grid that holds a point, clamped into the grid (row 0 at -90, column 0
    /// at -180). Readers and builders of a grid must agree on it.
    @inline(__always)
    package static func gridCell(latitude: Double, longitude: Double, cellSize: Double, columns: Int, rows: Int) -> (row: Int, column: Int) {
        (
            min(max(Int(((latitude + 90) / cellSize).rounded(.down)), 0), rows - 1),
            min(max(Int(((longitude + 180) / cellSize).rounded(.down)), 0), columns - 1)
        )
    }

    /// Root cell of a point; latitude 90 and longitude 180 fold into the last row and first column.
    @inline(__always)
    public static func rootCell(latitude: Double, longitude: Double) -> (row: Int, column: Int) {
        let row = min(max(Int((latitude + 90).rounded(.down)), 0), IndexFormat.rootRows - 1)
        var column = Int((longitude + 180).rounded(.down))
        if column >= IndexFormat.rootColumns { column -= IndexFormat.rootColumns }
        return (row, min(max(column, 0), IndexFormat.rootColumns - 1))
    }
}
