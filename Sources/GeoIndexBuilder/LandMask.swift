import GeoIndex

/// Which parts of the world are land or within the coast tolerance of it, at 1/64 degree,
/// taken from the built land layer. The country layer uses it to drop the territorial-sea
/// outlines of the timezone polygons: a cell with no land nearby answers "no country" anyway.
struct LandMask {
    static let cellsPerDegree = 64
    private let columns = 360 * LandMask.cellsPerDegree
    private let rows = 180 * LandMask.cellsPerDegree
    private var words: [UInt64]
    private var wordsPerRow: Int { (columns + 63) / 64 }

    init(landLayer: AreaLayerBuilder) {
        words = [UInt64](repeating: 0, count: ((360 * LandMask.cellsPerDegree + 63) / 64) * 180 * LandMask.cellsPerDegree)
        for row in 0..<IndexFormat.rootRows {
            for column in 0..<IndexFormat.rootColumns {
                mark(landLayer.roots[row * IndexFormat.rootColumns + column], landLayer, CellGeometry.rootRect(row: row, column: column))
            }
        }
    }

    private mutating func mark(_ reference: UInt32, _ layer: AreaLayerBuilder, _ cell: DegreeRect) {
        let tag = reference >> 30
        let payload = Int(reference & 0x3FFF_FFFF)
        if tag == IndexFormat.NodeTag.inner.rawValue {
            for quadrant in 0..<4 { mark(layer.inner[payload * 4 + quadrant], layer, cell.quadrant(quadrant)) }
            return
        }
        if tag == IndexFormat.NodeTag.uniform.rawValue && UInt32(payload) == IndexFormat.noArea { return }
        let (r0, r1, c0, c1) = span(cell, inset: true)
        guard r0 <= r1, c0 <= c1 else { return }
        for r in r0...r1 {
            for c in c0...c1 { words[r * wordsPerRow + c / 64] |= 1 << UInt64(c % 64) }
        }
    }

    private func span(_ rect: DegreeRect, inset: Bool) -> (Int, Int, Int, Int) {
        let scale = Double(LandMask.cellsPerDegree)
        let epsilon = inset ? 1e-9 : 0
        let r0 = max(Int(((rect.minY + 90) * scale + epsilon).rounded(.down)), 0)
        let r1 = min(Int(((rect.maxY + 90) * scale - epsilon).rounded(.down)), rows - 1)
        let c0 = max(Int(((rect.minX + 180) * scale + epsilon).rounded(.down)), 0)
        let c1 = min(Int(((rect.maxX + 180) * scale - epsilon).rounded(.down)), columns - 1)
        return (r0, r1, c0, c1)
    }

    /// True when no part of `rect` is land or near it. Coordinates are clamped the way the
    /// reader clamps land queries (Natural Earth stops at -89.9 and +-179.9).
    func isSea(_ rect: DegreeRect) -> Bool {
        let clamped = DegreeRect(
            minX: min(max(rect.minX, -179.89), 179.89), minY: max(rect.minY, -89.89),
            maxX: min(max(rect.maxX, -179.89), 179.89), maxY: max(rect.maxY, -89.89))
        let (r0, r1, c0, c1) = span(clamped, inset: false)
        guard r0 <= r1, c0 <= c1 else { return true }
        let firstWord = c0 / 64
        let lastWord = c1 / 64
        let firstMask = UInt64.max << UInt64(c0 % 64)
        let lastMask = UInt64.max >> UInt64(63 - c1 % 64)
        for r in r0...r1 {
            let base = r * wordsPerRow
            for w in firstWord...lastWord {
                var mask = UInt64.max
                if w == firstWord { mask &= firstMask }
                if w == lastWord { mask &= lastMask }
                if words[base + w] & mask != 0 { return false }
            }
        }
        return true
    }
}
