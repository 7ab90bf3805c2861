#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import GeoIndex

/// Writes a `DistanceFloorGrid` section: per cell, a lower bound of the distance from anywhere
/// in the cell to the nearest of `points`, measured as `PointGrid.forEach` measures (x scaled by
/// the cosine of the query's latitude, longitudes wrapped at the antimeridian).
///
/// The bound is taken between the cell and the bounding box of each occupied cell's points
/// (never more than a point-to-point distance), with x scaled at the cell's poleward edge (the
/// smallest scale any query in it uses), and lowered by one unit against rounding.
enum DistanceFloorGridBuilder {
    static func section(points: [(latitude: Double, longitude: Double)], cellSize: Double, unitMeters: Double) -> [UInt8] {
        let (columns, rows) = CellGeometry.gridSize(cellSize: cellSize)
        let saturated = DistanceFloorGrid.saturatedUnits
        let boxes = OccupiedBoxes(points: points, cellSize: cellSize, columns: columns, rows: rows)
        let metersY = CellGeometry.metersPerDegreeLatitude
        // Beyond this every floor saturates: no need to look further.
        let reach = (Double(saturated) + 1) * unitMeters
        let rowReach = Int(reach / (metersY * cellSize)) + 1
        var floors = [UInt8](repeating: saturated, count: rows * columns)
        for row in 0..<rows {
            let south = Double(row) * cellSize - 90
            let north = south + cellSize
            let poleward = min(max(abs(south), abs(north)), 89.999)
            let metersX = PointGrid.searchMetersPerDegreeLongitude(
                CellGeometry.metersPerDegreeLongitudeAtEquator * cos(poleward * Double.pi / 180))
            let columnReach = Int(reach / (metersX * cellSize)) + 1
            let nearbyRows = max(row - rowReach, 0)...min(row + rowReach, rows - 1)
            for column in 0..<columns {
                let west = Double(column) * cellSize - 180
                let east = west + cellSize
                var nearest2 = Double.infinity
                for otherRow in nearbyRows {
                    boxes.forEach(row: otherRow, near: column, reach: columnReach) { box in
                        let gapY = max(south - box.maxLatitude, box.minLatitude - north, 0) * metersY
                        // Also across the antimeridian, as the reader wraps longitude differences.
                        let gapX = min(
                            longitudeGap(west, east, box.minLongitude, box.maxLongitude),
                            longitudeGap(west, east, box.minLongitude - 360, box.maxLongitude - 360),
                            longitudeGap(west, east, box.minLongitude + 360, box.maxLongitude + 360)) * metersX
                        nearest2 = min(nearest2, gapX * gapX + gapY * gapY)
                    }
                }
                let units = (nearest2.squareRoot() / unitMeters).rounded(.down) - 1
                floors[row * columns + column] = UInt8(min(max(units, 0), Double(saturated)))
            }
        }
        // Only the rows with a floor below saturation are stored (the reader saturates the rest).
        let unsaturated = stride(from: 0, to: floors.count, by: columns).filter { start in
            floors[start..<(start + columns)].contains { $0 < saturated }
        }
        let firstRow = (unsaturated.first ?? 0) / columns
        let storedRows = unsaturated.last.map { $0 / columns - firstRow + 1 } ?? 0
        var out = ByteWriter()
        out.f64(cellSize)
        out.u32(UInt32(columns))
        out.u32(UInt32(rows))
        out.u32(UInt32(unitMeters))
        out.u32(UInt32(firstRow))
        out.u32(UInt32(storedRows))
        out.u32(0)
        out.bytes(Array(floors[(firstRow * columns)..<((firstRow + storedRows) * columns)]))
        return out.data
    }
}

@inline(__always)
private func longitudeGap(_ west: Double, _ east: Double, _ low: Double, _ high: Double) -> Double {
    max(west - high, low - east, 0)
}

/// The bounding box of the points in each occupied cell, by row.
private struct OccupiedBoxes {
    struct Box {
        var column: Int
        var minLatitude: Double
        var maxLatitude: Double
        var minLongitude: Double
        var maxLongitude: Double
    }

    let columns: Int
    /// Per row, the occupied cells' boxes sorted by column.
    private var byRow: [[Box]]

    init(points: [(latitude: Double, longitude: Double)], cellSize: Double, columns: Int, rows: Int) {
        self.columns = columns
        var boxes: [Int: Box] = [:]
        for point in points where point.latitude.isFinite && point.longitude.isFinite {
            let (row, column) = CellGeometry.gridCell(
                latitude: point.latitude, longitude: point.longitude, cellSize: cellSize, columns: columns, rows: rows)
            let key = row * columns + column
            var box = boxes[key] ?? Box(
                column: column, minLatitude: .infinity, maxLatitude: -.infinity, minLongitude: .infinity, maxLongitude: -.infinity)
            box.minLatitude = min(box.minLatitude, point.latitude)
            box.maxLatitude = max(box.maxLatitude, point.latitude)
            box.minLongitude = min(box.minLongitude, point.longitude)
            box.maxLongitude = max(box.maxLongitude, point.longitude)
            boxes[key] = box
        }
        var byRow = [[Box]](repeating: [], count: rows)
        for (key, box) in boxes { byRow[key / columns].append(box) }
        for row in byRow.indices { byRow[row].sort { $0.column < $1.column } }
        self.byRow = byRow
    }

    /// Calls `body` for each occupied cell of `row` within `reach` columns of `column`, around
    /// the antimeridian too.
    func forEach(row: Int, near column: Int, reach: Int, _ body: (Box) -> Void) {
        let boxes = byRow[row]
        guard !boxes.isEmpty else { return }
        if 2 * reach + 1 >= columns {
            boxes.forEach(body)
            return
        }
        // Up to two column runs when the window crosses the antimeridian.
        let first = column - reach, last = column + reach
        let runs = first < 0 ? [(first + columns, columns - 1), (0, last)]
            : last >= columns ? [(first, columns - 1), (0, last - columns)] : [(first, last)]
        for (low, high) in runs {
            var index = boxes.partitioningIndex { $0.column >= low }
            while index < boxes.count, boxes[index].column <= high {
                body(boxes[index])
                index += 1
            }
        }
    }
}

extension Array {
    /// The first index whose element satisfies `belongs`, for a predicate false then true.
    fileprivate func partitioningIndex(where belongs: (Element) -> Bool) -> Int {
        var low = 0, high = count
        while low < high {
            let mid = (low + high) / 2
            if belongs(self[mid]) { high = mid } else { low = mid + 1 }
        }
        return low
    }
}
