import GeoIndex

/// A longitude/latitude pair in degrees.
public struct GeoPoint: Sendable, Equatable {
    public var x: Double
    public var y: Double

    public init(longitude: Double, latitude: Double) {
        x = longitude
        y = latitude
    }
}

/// A closed ring without the repeated closing vertex.
public typealias Ring = [GeoPoint]

/// One polygon: the outer ring followed by its holes (even-odd rule, so orientation is free).
public typealias Polygon = [Ring]

/// A labelled area made of polygons (a country zone, an admin-1 unit, a land mass).
public struct LabelledArea: Sendable {
    public var properties: [String: String]
    public var polygons: [Polygon]

    public init(properties: [String: String], polygons: [Polygon]) {
        self.properties = properties
        self.polygons = polygons
    }
}

extension Ring {
    var bounds: DegreeRect {
        var rect = DegreeRect(minX: .infinity, minY: .infinity, maxX: -.infinity, maxY: -.infinity)
        for p in self {
            rect.minX = Swift.min(rect.minX, p.x)
            rect.maxX = Swift.max(rect.maxX, p.x)
            rect.minY = Swift.min(rect.minY, p.y)
            rect.maxY = Swift.max(rect.maxY, p.y)
        }
        return rect
    }

    var signedArea: Double {
        guard count >= 3 else { return 0 }
        var sum = 0.0
        var previous = self[count - 1]
        for p in self {
            sum += previous.x * p.y - p.x * previous.y
            previous = p
        }
        return sum * 0.5
    }
}

/// Even-odd point-in-polygon over a set of rings.
func contains(_ rings: [Ring], _ point: GeoPoint) -> Bool {
    var inside = false
    for ring in rings where ring.count >= 3 {
        var previous = ring[ring.count - 1]
        for current in ring {
            if (previous.y > point.y) != (current.y > point.y) {
                let crossX = previous.x + (point.y - previous.y) / (current.y - previous.y) * (current.x - previous.x)
                if point.x < crossX { inside.toggle() }
            }
            previous = current
        }
    }
    return inside
}
