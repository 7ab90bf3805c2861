import GeoIndex

/// Builds an area layer section (see `AreaLayer` in the reader for the layout).
///
/// Root cells are reached by recursive bisection of blocks of cells, clipping the rings at every
/// step, so each vertex is clipped about log2(64,800) times instead of once per cell its ring's
/// bounding box touches. Blocks with no edge inside become uniform without further work.
struct AreaLayerBuilder {
    struct ClippedArea {
        var id: UInt32
        var rings: [Ring]
        /// Whether each ring is a hole (GeoJSON: every ring after a polygon's first).
        var holes: [Bool]
    }

    struct Statistics {
        var innerNodes = 0
        var leaves = 0
        var leafVertices = 0
    }

    let absoluteMargin: Double
    let relativeMargin: Double
    let maximumDepth: Int
    let leafVertexLimit: Int
    /// Leaf quantisation target in degrees.
    let resolution: Double
    private(set) var roots = [UInt32](repeating: IndexFormat.noArea, count: IndexFormat.rootColumns * IndexFormat.rootRows)
    private(set) var inner: [UInt32] = []
    private(set) var leafBlob: [UInt8] = []
    private(set) var statistics = Statistics()

    /// - Parameters:
    ///   - absoluteMargin: degrees of latitude every cell reaches beyond its edges (edge distances
    ///     are exact up to this).
    ///   - relativeMargin: share of the cell height added on top, so deep cells stay small.
    ///   - maximumDepth: deepest level; deeper cells than the margin allows do not get smaller.
    ///   - resolution: leaf quantisation target in degrees; a fraction of the source's own accuracy.
    init(absoluteMargin: Double, relativeMargin: Double, maximumDepth: Int, resolution: Double, leafVertexLimit: Int = 64) {
        self.resolution = resolution
        self.absoluteMargin = absoluteMargin
        self.relativeMargin = relativeMargin
        self.maximumDepth = min(maximumDepth, IndexFormat.maximumDepth)
        self.leafVertexLimit = leafVertexLimit
    }

    private func margins(row: Int, depth: Int) -> (x: Double, y: Double) {
        let y = CellGeometry.latitudeMargin(depth: depth, absolute: absoluteMargin, relative: relativeMargin)
        return (CellGeometry.longitudeMargin(row: row, marginLatitude: y), y)
    }

    /// Adds every area; ids must be below `IndexFormat.noArea`.
    mutating func build(areas: [(id: UInt32, polygons: [Polygon])]) throws(BuildError) {
        var clipped: [ClippedArea] = []
        for area in areas {
            var rings: [Ring] = []
            var holes: [Bool] = []
            for polygon in area.polygons {
                for (index, ring) in polygon.enumerated() where ring.count >= 3 {
                    rings.append(ring)
                    holes.append(index > 0)
                }
            }
            if !rings.isEmpty { clipped.append(ClippedArea(id: area.id, rings: rings, holes: holes)) }
        }
        try buildBlock(rows: 0..<IndexFormat.rootRows, columns: 0..<IndexFormat.rootColumns, areas: clipped)
    }

    /// The serialised section.
    func section() -> [UInt8] {
        var out = ByteWriter()
        out.u32(UInt32(IndexFormat.rootColumns))
        out.u32(UInt32(IndexFormat.rootRows))
        out.f64(absoluteMargin)
        out.f64(relativeMargin)
        out.f64(resolution)
        let (blocks, expandedRoots) = rootBlocks()
        out.u32(UInt32(inner.count / 4))
        out.u32(UInt32(leafBlob.count))
        out.u32(UInt32(expandedRoots.count))
        out.u32(0)
        for entry in blocks { out.u32(entry) }
        for reference in expandedRoots { out.u32(reference) }
        for reference in inner { out.u32(reference) }
        out.bytes(leafBlob)
        return out.data
    }

    /// Block entries and the root references of the blocks that are not one uniform reference.
    private func rootBlocks() -> ([UInt32], [UInt32]) {
        let side = IndexFormat.rootBlockSide
        var entries: [UInt32] = []
        var expanded: [UInt32] = []
        for blockRow in 0..<IndexFormat.rootBlockRows {
            for blockColumn in 0..<IndexFormat.rootBlockColumns {
                var cells: [UInt32] = []
                for r in 0..<side {
                    for c in 0..<side {
                        let row = blockRow * side + r
                        let column = blockColumn * side + c
                        let inside = row < IndexFormat.rootRows && column < IndexFormat.rootColumns
                        cells.append(inside ? roots[row * IndexFormat.rootColumns + column] : IndexFormat.noArea)
                    }
                }
                if cells.allSatisfy({ $0 == cells[0] }) && cells[0] >> 30 == IndexFormat.NodeTag.uniform.rawValue {
                    entries.append(cells[0])
                } else {
                    entries.append(IndexFormat.rootBlockExpanded | UInt32(expanded.count))
                    expanded.append(contentsOf: cells)
                }
            }
        }
        return (entries, expanded)
    }

    private func blockRect(rows: Range<Int>, columns: Range<Int>) -> DegreeRect {
        var marginX = 0.0
        let marginY = margins(row: rows.lowerBound, depth: 0).y
        for row in rows { marginX = max(marginX, margins(row: row, depth: 0).x) }
        return DegreeRect(
            minX: Double(columns.lowerBound - 180), minY: Double(rows.lowerBound - 90),
            maxX: Double(columns.upperBound - 180), maxY: Double(rows.upperBound - 90)
        ).expanded(byX: marginX, y: marginY)
    }

    private mutating func buildBlock(rows: Range<Int>, columns: Range<Int>, areas: [ClippedArea]) throws(BuildError) {
        let rect = blockRect(rows: rows, columns: columns)
        if !areas.contains(where: { hasRealEdges($0, rect) }) {
            let reference = uniformReference(areas, rect)
            for row in rows {
                for column in columns { roots[row * IndexFormat.rootColumns + column] = reference }
            }
            return
        }
        if rows.count == 1 && columns.count == 1 {
            let cell = CellGeometry.rootRect(row: rows.lowerBound, column: columns.lowerBound)
            let margin = margins(row: rows.lowerBound, depth: 0)
            let expanded = cell.expanded(byX: margin.x, y: margin.y)
            let reference = try buildNode(
                cell: cell, row: rows.lowerBound, depth: 0, areas: Self.clip(areas, to: expanded))
            roots[rows.lowerBound * IndexFormat.rootColumns + columns.lowerBound] = reference
            return
        }
        if columns.count >= rows.count {
            let middle = columns.lowerBound + columns.count / 2
            for half in [columns.lowerBound..<middle, middle..<columns.upperBound] {
                try buildBlock(rows: rows, columns: half, areas: Self.clip(areas, to: blockRect(rows: rows, columns: half)))
            }
        } else {
            let middle = rows.lowerBound + rows.count / 2
            for half in [rows.lowerBound..<middle, middle..<rows.upperBound] {
                try buildBlock(rows: half, columns: columns, areas: Self.clip(areas, to: blockRect(rows: half, columns: columns)))
            }
        }
    }

    private mutating func buildNode(cell: DegreeRect, row: Int, depth: Int, areas: [ClippedArea]) throws(BuildError) -> UInt32 {
        let margin = margins(row: row, depth: depth)
        let expanded = cell.expanded(byX: margin.x, y: margin.y)
        if !areas.contains(where: { hasRealEdges($0, expanded) }) {
            return uniformReference(areas, expanded)
        }
        // A leaf does not store the area covering the rest of the cell, so it does not count.
        let unstored = Self.areaCoveringTheRest(areas, (expanded.maxX - expanded.minX) * (expanded.maxY - expanded.minY))
        let vertexCount =
            areas.reduce(0) { $0 + $1.rings.reduce(0) { $0 + $1.count } } - (unstored?.rings.reduce(0) { $0 + $1.count } ?? 0)
        if vertexCount <= leafVertexLimit || depth >= maximumDepth {
            return try leafReference(areas, expanded)
        }
        var children: [UInt32] = []
        for quadrant in 0..<4 {
            let child = cell.quadrant(quadrant)
            let childMargin = margins(row: row, depth: depth + 1)
            let childExpanded = child.expanded(byX: childMargin.x, y: childMargin.y)
            children.append(try buildNode(cell: child, row: row, depth: depth + 1, areas: Self.clip(areas, to: childExpanded)))
        }
        if children.allSatisfy({ $0 == children[0] && $0 >> 30 == IndexFormat.NodeTag.uniform.rawValue }) {
            return children[0]
        }
        let index = inner.count / 4
        guard index < Int(IndexFormat.noArea) else { throw .limitExceeded("more than 2^30 quadtree nodes") }
        inner.append(contentsOf: children)
        statistics.innerNodes += 1
        return IndexFormat.NodeTag.inner.rawValue << 30 | UInt32(index)
    }

    /// Zigzag varint of a delta within +-8191: one byte below 64 in magnitude, else two.
    static func appendZigzag(_ delta: Int, to out: inout ByteWriter) {
        let value = UInt32(bitPattern: Int32((delta << 1) ^ (delta >> 63)))
        if value < 0x80 {
            out.u8(UInt8(value))
        } else {
            out.u8(UInt8(value & 0x7F) | 0x80)
            out.u8(UInt8(value >> 7))
        }
    }

    /// The area with the most vertices, when the areas together cover the rectangle exactly once.
    static func areaCoveringTheRest(_ areas: [ClippedArea], _ rectangleArea: Double) -> ClippedArea? {
        guard areas.count >= 2, rectangleArea > 0 else { return nil }
        var covered = 0.0
        for area in areas {
            var own = 0.0
            for (ring, hole) in zip(area.rings, area.holes) { own += (hole ? -1 : 1) * abs(ring.signedArea) }
            guard own > -1e-12 * rectangleArea else { return nil }
            covered += own
        }
        guard abs(covered - rectangleArea) <= 1e-7 * rectangleArea else { return nil }
        return areas.max { $0.rings.reduce(0) { $0 + $1.count } < $1.rings.reduce(0) { $0 + $1.count } }
    }

    static func clip(_ areas: [ClippedArea], to rect: DegreeRect) -> [ClippedArea] {
        var result: [ClippedArea] = []
        for area in areas {
            var rings: [Ring] = []
            var holes: [Bool] = []
            for (ring, hole) in zip(area.rings, area.holes) {
                let clipped = RectClipper.clip(ring, to: rect)
                if clipped.count >= 3, abs(clipped.signedArea) > 1e-16 {
                    rings.append(clipped)
                    holes.append(hole)
                }
            }
            if !rings.isEmpty { result.append(ClippedArea(id: area.id, rings: rings, holes: holes)) }
        }
        return result
    }

    /// True when some edge of the area is not just a stretch of the rectangle's border.
    private func hasRealEdges(_ area: ClippedArea, _ rect: DegreeRect) -> Bool {
        for ring in area.rings {
            var previous = ring[ring.count - 1]
            for current in ring {
                let onVertical = previous.x == current.x && (current.x <= rect.minX || current.x >= rect.maxX)
                let onHorizontal = previous.y == current.y && (current.y <= rect.minY || current.y >= rect.maxY)
                if !onVertical && !onHorizontal { return true }
                previous = current
            }
        }
        return false
    }

    /// With no real edge inside, an area either covers the whole rectangle or none of it.
    private func uniformReference(_ areas: [ClippedArea], _ rect: DegreeRect) -> UInt32 {
        let center = GeoPoint(longitude: (rect.minX + rect.maxX) * 0.5, latitude: (rect.minY + rect.maxY) * 0.5)
        for area in areas where contains(area.rings, center) {
            return IndexFormat.NodeTag.uniform.rawValue << 30 | area.id
        }
        return IndexFormat.NodeTag.uniform.rawValue << 30 | IndexFormat.noArea
    }

    private mutating func leafReference(_ areas: [ClippedArea], _ rect: DegreeRect) throws(BuildError) -> UInt32 {
        let offset = leafBlob.count
        guard offset < Int(IndexFormat.noArea) else { throw .limitExceeded("leaf data larger than 1 GiB") }
        var out = ByteWriter()
        var encodedAreas = 0
        out.u16(0)  // patched below
        let spanX = rect.maxX - rect.minX
        let spanY = rect.maxY - rect.minY
        let steps = CellGeometry.leafSteps(latitudeSpan: spanY, resolution: resolution)
        // When the areas tile the cell without gaps, the largest one need not be stored: a point
        // in none of the others is in it, and its edges are theirs. This halves border cells.
        let defaultArea = Self.areaCoveringTheRest(areas, spanX * spanY)
        out.u32(defaultArea?.id ?? IndexFormat.noArea)
        for area in areas where area.id != defaultArea?.id {
            var encodedRings: [[(Int, Int)]] = []
            for ring in area.rings {
                var quantised: [(Int, Int)] = []
                quantised.reserveCapacity(ring.count)
                for p in ring {
                    let qx = Int(min(max(((p.x - rect.minX) / spanX * steps).rounded(), 0), steps))
                    let qy = Int(min(max(((p.y - rect.minY) / spanY * steps).rounded(), 0), steps))
                    if let last = quantised.last, last == (qx, qy) { continue }
                    quantised.append((qx, qy))
                }
                while quantised.count > 1, let first = quantised.first, let last = quantised.last, first == last { quantised.removeLast() }
                guard quantised.count >= 3 else { continue }
                guard quantised.count <= Int(UInt16.max) else {
                    throw .limitExceeded("a ring with \(quantised.count) vertices in one cell at maximum depth")
                }
                encodedRings.append(quantised)
            }
            guard !encodedRings.isEmpty else { continue }
            guard encodedRings.count <= Int(UInt16.max) else { throw .limitExceeded("more than 65535 rings in one cell") }
            out.u32(area.id)
            out.u16(UInt16(encodedRings.count))
            for ring in encodedRings {
                out.u16(UInt16(ring.count))
                var previous = (0, 0)
                for vertex in ring {
                    Self.appendZigzag(vertex.0 - previous.0, to: &out)
                    Self.appendZigzag(vertex.1 - previous.1, to: &out)
                    previous = vertex
                }
                statistics.leafVertices += ring.count
            }
            encodedAreas += 1
        }
        guard encodedAreas <= Int(UInt16.max) else { throw .limitExceeded("more than 65535 areas in one cell") }
        out.patchU16(at: 0, UInt16(encodedAreas))
        leafBlob.append(contentsOf: out.data)
        statistics.leaves += 1
        return IndexFormat.NodeTag.leaf.rawValue << 30 | UInt32(offset)
    }
}
