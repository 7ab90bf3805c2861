#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A polygon layer stored as a one-degree root grid of quadtrees. A node is either uniform
/// (one area or none covers the whole cell and its margin) or a leaf holding each area's rings
/// clipped to the cell's expanded rectangle, quantised to 12 bits and delta-coded.
///
/// Section layout: `u32 columns, u32 rows, f64 absoluteMargin, f64 relativeMargin,
/// f64 resolution, u32 innerCount, u32 leafBytes, u32 rootReferenceCount`, then 45 x 23 u32 block
/// entries (a uniform reference, or `rootBlockExpanded | first index` of 64 root references) (margins in degrees of latitude, see `CellGeometry`),
/// then `rows*columns` u32 root references, `innerCount*4` u32 child references, the leaf blob.
package struct AreaLayer: Sendable {
    static let headerSize = 48

    /// Fixed margin in degrees of latitude (the guaranteed reach of edge distances).
    let absoluteMargin: Double
    let relativeMargin: Double
    /// Target leaf quantisation in degrees (see `CellGeometry.leafSteps`).
    let resolution: Double
    private let blocks: ByteView
    private let roots: ByteView
    private let inner: ByteView
    private let leaves: ByteView

    package init?(section: ByteView) {
        guard let columns = section.u32(0), let rows = section.u32(4), let absolute = section.f64(8),
            let relative = section.f64(16), let resolution = section.f64(24), let innerCount = section.u32(32),
            let leafBytes = section.u32(36), let rootCount = section.u32(40), resolution.isFinite, resolution >= 0, resolution < 1,
            Int(columns) == IndexFormat.rootColumns, Int(rows) == IndexFormat.rootRows,
            absolute.isFinite, absolute >= 0, absolute < 1, relative.isFinite, relative >= 0, relative < 1
        else { return nil }
        let blockBytes = IndexFormat.rootBlockColumns * IndexFormat.rootBlockRows * 4
        let rootBytes = Int(rootCount) * 4
        guard let blocks = section.slice(Self.headerSize, blockBytes),
            let roots = section.slice(Self.headerSize + blockBytes, rootBytes),
            let inner = section.slice(Self.headerSize + blockBytes + rootBytes, Int(innerCount) * 16),
            let leaves = section.slice(Self.headerSize + blockBytes + rootBytes + Int(innerCount) * 16, Int(leafBytes))
        else { return nil }
        self.blocks = blocks
        self.absoluteMargin = absolute
        self.relativeMargin = relative
        self.resolution = resolution
        self.roots = roots
        self.inner = inner
        self.leaves = leaves
    }

    /// Where a point falls: a uniform cell or a leaf, with the geometry needed to read it.
    struct Located {
        var uniformArea: UInt32?  // set for uniform cells (noArea means "nothing here")
        var leafOffset: Int
        var expanded: DegreeRect
        var cell: DegreeRect
    }

    @inline(__always)
    func locate(latitude: Double, longitude: Double) -> Located? {
        let (row, column) = CellGeometry.rootCell(latitude: latitude, longitude: longitude)
        var cell = CellGeometry.rootRect(row: row, column: column)
        let side = IndexFormat.rootBlockSide
        guard let block = blocks.u32(((row / side) * IndexFormat.rootBlockColumns + column / side) * 4) else { return nil }
        var reference = block
        if block & IndexFormat.rootBlockExpanded != 0 {
            let first = Int(block & ~IndexFormat.rootBlockExpanded)
            guard let root = roots.u32((first + (row % side) * side + column % side) * 4) else { return nil }
            reference = root
        }
        // Depth is bounded so a crafted cycle of inner nodes cannot loop forever.
        for depth in 0...IndexFormat.maximumDepth {
            let payload = Int(reference & 0x3FFF_FFFF)
            let tag = reference >> 30
            if tag == IndexFormat.NodeTag.uniform.rawValue || tag == IndexFormat.NodeTag.leaf.rawValue {
                let marginY = CellGeometry.latitudeMargin(depth: depth, absolute: absoluteMargin, relative: relativeMargin)
                let marginX = CellGeometry.longitudeMargin(row: row, marginLatitude: marginY)
                let expanded = cell.expanded(byX: marginX, y: marginY)
                if tag == IndexFormat.NodeTag.uniform.rawValue {
                    return Located(uniformArea: UInt32(payload), leafOffset: 0, expanded: expanded, cell: cell)
                }
                return Located(uniformArea: nil, leafOffset: payload, expanded: expanded, cell: cell)
            }
            switch tag {
            case IndexFormat.NodeTag.inner.rawValue:
                let midX = (cell.minX + cell.maxX) * 0.5
                let midY = (cell.minY + cell.maxY) * 0.5
                let quadrant = (longitude >= midX ? 1 : 0) | (latitude >= midY ? 2 : 0)
                cell = cell.quadrant(quadrant)
                guard let child = inner.u32(payload * 16 + quadrant * 4) else { return nil }
                reference = child
            default:
                return nil
            }
        }
        return nil
    }

    /// The result of testing a point against one cell.
    package struct Probe {
        /// The area containing the point, if any.
        package var area: UInt32?
        /// Metres from the point to the nearest edge of `area` (or, with no area, of any area);
        /// a lower bound when no edge lies within the cell's margin.
        package var edgeDistance: Double
        /// The nearest area accepted by the caller's filter, when the containing one was not.
        package var nearestAccepted: UInt32?
        package var nearestAcceptedDistance: Double
    }

    /// Tests a point; `accept` picks the nearest acceptable area when the containing one is not.
    @inline(__always)
    /// Edges further than `distanceLimit` metres may be skipped (the distance is then reported
    /// as at least the limit).
    package func probe(
        latitude: Double, longitude: Double, metersPerDegreeLongitude metersX: Double, distanceLimit: Double = .infinity,
        accept: (UInt32) -> Bool = { _ in true }
    ) -> Probe? {
        guard let located = locate(latitude: latitude, longitude: longitude) else { return nil }
        let rect = located.expanded
        let metersY = CellGeometry.metersPerDegreeLatitude
        if let area = located.uniformArea {
            // No edge lies inside the expanded rectangle: its border bounds the edge distance.
            let bound = min(
                (longitude - rect.minX) * metersX, (rect.maxX - longitude) * metersX,
                (latitude - rect.minY) * metersY, (rect.maxY - latitude) * metersY)
            let found: UInt32? = area == IndexFormat.noArea ? nil : area
            return Probe(area: found, edgeDistance: max(bound, 0), nearestAccepted: nil, nearestAcceptedDistance: .infinity)
        }
        let spanX = rect.maxX - rect.minX
        let spanY = rect.maxY - rect.minY
        let steps = CellGeometry.leafSteps(latitudeSpan: spanY, resolution: resolution)
        let px = (longitude - rect.minX) / spanX * steps
        let py = (latitude - rect.minY) / spanY * steps
        let scaleX = spanX / steps * metersX
        let scaleY = spanY / steps * metersY
        let borderBound = min(
            (longitude - rect.minX) * metersX, (rect.maxX - longitude) * metersX,
            (latitude - rect.minY) * metersY, (rect.maxY - latitude) * metersY)
        return scanLeaf(
            offset: located.leafOffset, px: px, py: py, steps: Int(steps), scaleX: scaleX, scaleY: scaleY,
            borderBound: max(borderBound, 0), distanceLimit: distanceLimit, accept: accept)
    }

    // hot loop: one pass over a leaf's rings decodes each vertex, tests the point against its
    // edge and keeps the nearest edge, every running value in registers. It stays one function:
    // split per ring or per vertex, it would add calls on the path of every lookup near a border.
    private func scanLeaf(
        offset: Int, px: Double, py: Double, steps: Int, scaleX: Double, scaleY: Double, borderBound: Double,
        distanceLimit: Double, accept: (UInt32) -> Bool
    ) -> Probe? {
        let limit2 = distanceLimit.isFinite ? distanceLimit * distanceLimit : Double.infinity
        guard let areaCount = leaves.u16(offset), let defaultArea = leaves.u32(offset + 2) else { return nil }
        var cursor = offset + 6
        var result = Probe(area: nil, edgeDistance: .infinity, nearestAccepted: nil, nearestAcceptedDistance: .infinity)
        var nearestAnyDistance2 = Double.infinity
        let top = steps
        for _ in 0..<Int(areaCount) {
            guard let area = leaves.u32(cursor), let ringCount = leaves.u16(cursor + 4) else { return nil }
            cursor += 6
            var inside = false
            var nearest2 = Double.infinity
            for _ in 0..<Int(ringCount) {
                guard let vertexCount = leaves.u16(cursor) else { return nil }
                cursor += 2
                let n = Int(vertexCount)
                guard n >= 3 else { return nil }
                // Vertices are zigzag deltas from the previous one (see IndexFormat).
                var x = 0, y = 0
                var firstX = 0.0, firstY = 0.0
                var previousX = 0.0, previousY = 0.0
                var previousRawX = 0, previousRawY = 0
                for i in 0...n {
                    if i < n {
                        if cursor &+ 4 <= leaves.count {
                            // At most four bytes per vertex: in bounds, so read without re-checking.
                            x &+= Self.uncheckedZigzag(leaves.base, &cursor)
                            y &+= Self.uncheckedZigzag(leaves.base, &cursor)
                        } else {
                            guard let dx = Self.zigzagDelta(leaves, &cursor), let dy = Self.zigzagDelta(leaves, &cursor) else { return nil }
                            x &+= dx
                            y &+= dy
                        }
                    }
                    let currentX: Double, currentY: Double, rawX: Int, rawY: Int
                    if i == n {
                        currentX = firstX
                        currentY = firstY
                        rawX = Int(firstX)
                        rawY = Int(firstY)
                    } else {
                        currentX = Double(x)
                        currentY = Double(y)
                        rawX = x
                        rawY = y
                    }
                    if i == 0 {
                        firstX = currentX
                        firstY = currentY
                    } else {
                        let x1 = previousX, y1 = previousY, x2 = currentX, y2 = currentY
                        if (y1 > py) != (y2 > py) {
                            let crossX = x1 + (py - y1) / (y2 - y1) * (x2 - x1)
                            if px < crossX { inside.toggle() }
                        }
                        // Edges along the expanded rectangle come from clipping, not from the data.
                        let artificial =
                            (previousRawX == rawX && (rawX == 0 || rawX == top))
                            || (previousRawY == rawY && (rawY == 0 || rawY == top))
                        if !artificial {
                            // Cheap lower bound first: most edges are far from the point.
                            let gapY = max(min(y1, y2) - py, py - max(y1, y2), 0) * scaleY
                            let gapX = max(min(x1, x2) - px, px - max(x1, x2), 0) * scaleX
                            let bound2 = gapX * gapX + gapY * gapY
                            if bound2 < nearest2 && bound2 <= limit2 {
                                let d2 = segmentDistanceSquared(px, py, x1, y1, x2, y2, scaleX, scaleY)
                                if d2 < nearest2 { nearest2 = d2 }
                            }
                        }
                    }
                    previousX = currentX
                    previousY = currentY
                    previousRawX = rawX
                    previousRawY = rawY
                }
            }
            if inside && result.area == nil {
                result.area = area
                result.edgeDistance = min(nearest2.squareRoot(), borderBound)
            }
            if nearest2 < nearestAnyDistance2 { nearestAnyDistance2 = nearest2 }
            if accept(area) {
                let d = inside ? 0 : nearest2.squareRoot()
                if d < result.nearestAcceptedDistance {
                    result.nearestAcceptedDistance = d
                    result.nearestAccepted = area
                }
            }
        }
        if result.area == nil {
            result.edgeDistance = min(nearestAnyDistance2.squareRoot(), borderBound)
            // The areas tile this cell: a point in none of the stored ones is in the unstored one.
            if defaultArea != IndexFormat.noArea {
                result.area = defaultArea
                if accept(defaultArea) {
                    result.nearestAccepted = defaultArea
                    result.nearestAcceptedDistance = 0
                }
            }
        } else if defaultArea != IndexFormat.noArea, result.nearestAccepted == nil, accept(defaultArea) {
            // The unstored area surrounds the stored ones, so it is as near as their edges.
            result.nearestAccepted = defaultArea
            result.nearestAcceptedDistance = result.edgeDistance
        }
        if distanceLimit.isFinite && !(result.edgeDistance <= distanceLimit) {
            result.edgeDistance = max(result.edgeDistance, distanceLimit.nextUp)
        }
        return result
    }
}

extension AreaLayer {
    /// `zigzagDelta` for a cursor the caller has checked is at least two bytes from the end.
    @inline(__always)
    static func uncheckedZigzag(_ base: UnsafeRawPointer, _ cursor: inout Int) -> Int {
        let first = base.load(fromByteOffset: cursor, as: UInt8.self)
        var value = Int(first & 0x7F)
        if first & 0x80 != 0 {
            value |= Int(base.load(fromByteOffset: cursor + 1, as: UInt8.self) & 0x7F) << 7
            cursor += 2
        } else {
            cursor += 1
        }
        return (value >> 1) ^ -(value & 1)
    }

    /// One zigzag-coded delta of one or two bytes.
    @inline(__always)
    static func zigzagDelta(_ bytes: ByteView, _ cursor: inout Int) -> Int? {
        guard let first = bytes.u8(cursor) else { return nil }
        var value = Int(first & 0x7F)
        if first & 0x80 != 0 {
            guard let second = bytes.u8(cursor + 1), second & 0x80 == 0 else { return nil }
            value |= Int(second) << 7
            cursor += 2
        } else {
            cursor += 1
        }
        return (value >> 1) ^ -(value & 1)
    }
}

/// Squared distance in metres from point p to segment ab, all given in quantised units.
@inline(__always)
func segmentDistanceSquared(
    _ px: Double, _ py: Double, _ ax: Double, _ ay: Double, _ bx: Double, _ by: Double, _ scaleX: Double, _ scaleY: Double
) -> Double {
    let vx = (bx - ax) * scaleX, vy = (by - ay) * scaleY
    let wx = (px - ax) * scaleX, wy = (py - ay) * scaleY
    let length2 = vx * vx + vy * vy
    var t = length2 > 0 ? (wx * vx + wy * vy) / length2 : 0
    t = min(max(t, 0), 1)
    let dx = wx - t * vx, dy = wy - t * vy
    return dx * dx + dy * dy
}
