import GeoIndex

/// Sutherland-Hodgman clipping of rings to a rectangle.
///
/// For a concave ring the output can contain edges running along the rectangle's border; they
/// carry no information, but parity (point-in-polygon) stays exact for every point inside the
/// rectangle, which is all a cell needs. Intersections lie exactly on the clipping line so
/// the reader can recognise those artificial edges after quantisation.
enum RectClipper {
    static func clip(_ ring: Ring, to rect: DegreeRect) -> Ring {
        let bounds = ring.bounds
        if bounds.minX >= rect.minX, bounds.maxX <= rect.maxX, bounds.minY >= rect.minY, bounds.maxY <= rect.maxY {
            return ring
        }
        if bounds.maxX <= rect.minX || bounds.minX >= rect.maxX || bounds.maxY <= rect.minY || bounds.minY >= rect.maxY {
            return []
        }
        var output = ring
        var input: Ring = []
        for side in 0..<4 {
            swap(&input, &output)
            output.removeAll(keepingCapacity: true)
            guard var previous = input.last else { return [] }
            for current in input {
                let currentInside = inside(current, side, rect)
                let previousInside = inside(previous, side, rect)
                if currentInside {
                    if !previousInside { output.append(intersection(previous, current, side, rect)) }
                    output.append(current)
                } else if previousInside {
                    output.append(intersection(previous, current, side, rect))
                }
                previous = current
            }
        }
        return collapseBorderRuns(output, rect)
    }

    /// Drops vertices in the middle of a run along one side of the rectangle. A ring that winds
    /// around the cell far outside it leaves long zig-zags on the border; collapsing a collinear
    /// run to its ends keeps the crossing parity of every inner point, and keeps cells small.
    private static func collapseBorderRuns(_ ring: Ring, _ rect: DegreeRect) -> Ring {
        @inline(__always)
        func sameSide(_ a: GeoPoint, _ b: GeoPoint, _ c: GeoPoint) -> Bool {
            (a.x == b.x && b.x == c.x && (b.x == rect.minX || b.x == rect.maxX))
                || (a.y == b.y && b.y == c.y && (b.y == rect.minY || b.y == rect.maxY))
        }
        var result: Ring = []
        result.reserveCapacity(ring.count)
        for p in ring {
            if result.last == p { continue }
            while result.count >= 2, sameSide(result[result.count - 2], result[result.count - 1], p) { result.removeLast() }
            result.append(p)
        }
        // The ring is closed: collapse across the seam too.
        var changed = true
        while changed && result.count >= 3 {
            changed = false
            if result.first == result.last {
                result.removeLast()
                changed = true
            } else if sameSide(result[result.count - 2], result[result.count - 1], result[0]) {
                result.removeLast()
                changed = true
            } else if sameSide(result[result.count - 1], result[0], result[1]) {
                result.removeFirst()
                changed = true
            }
        }
        return result
    }

    @inline(__always)
    private static func inside(_ p: GeoPoint, _ side: Int, _ r: DegreeRect) -> Bool {
        switch side {
        case 0: return p.x >= r.minX
        case 1: return p.x <= r.maxX
        case 2: return p.y >= r.minY
        default: return p.y <= r.maxY
        }
    }

    @inline(__always)
    private static func intersection(_ a: GeoPoint, _ b: GeoPoint, _ side: Int, _ r: DegreeRect) -> GeoPoint {
        switch side {
        case 0, 1:
            let x = side == 0 ? r.minX : r.maxX
            let t = (x - a.x) / (b.x - a.x)
            return GeoPoint(longitude: x, latitude: a.y + t * (b.y - a.y))
        default:
            let y = side == 2 ? r.minY : r.maxY
            let t = (y - a.y) / (b.y - a.y)
            return GeoPoint(longitude: a.x + t * (b.x - a.x), latitude: y)
        }
    }
}
