/// Reads a GeoJSON FeatureCollection of Polygon / MultiPolygon features (Natural Earth exports,
/// the fetch script's timezone-derived countries). Properties are kept as strings.
enum GeoJSONReader {
    static func read(path: String) throws(BuildError) -> [LabelledArea] {
        let document = try JSONParser.parse(file: path)
        guard let features = document["features"]?.array else {
            throw .malformedInput(path: path, line: 0, detail: "expected a GeoJSON FeatureCollection with a \"features\" array")
        }
        var areas: [LabelledArea] = []
        areas.reserveCapacity(features.count)
        for (index, feature) in features.enumerated() {
            var properties: [String: String] = [:]
            if case .object(let members)? = feature["properties"] {
                for (key, value) in members {
                    switch value {
                    case .string(let text): properties[key] = text
                    case .number(let number): properties[key] = String(number)
                    default: continue
                    }
                }
            }
            guard let geometry = feature["geometry"], let kind = geometry["type"]?.string,
                let coordinates = geometry["coordinates"]?.array
            else { continue }
            var polygons: [Polygon] = []
            switch kind {
            case "Polygon":
                polygons.append(try polygon(coordinates, path: path, feature: index))
            case "MultiPolygon":
                for part in coordinates {
                    guard let rings = part.array else { throw malformed(path, index) }
                    polygons.append(try polygon(rings, path: path, feature: index))
                }
            default:
                continue
            }
            areas.append(LabelledArea(properties: properties, polygons: polygons))
        }
        return areas
    }

    private static func malformed(_ path: String, _ feature: Int) -> BuildError {
        .malformedInput(path: path, line: 0, detail: "feature \(feature) has malformed polygon coordinates")
    }

    private static func polygon(_ rings: [JSONValue], path: String, feature: Int) throws(BuildError) -> Polygon {
        var polygon: Polygon = []
        for ring in rings {
            guard let positions = ring.array else { throw malformed(path, feature) }
            var points: Ring = []
            points.reserveCapacity(positions.count)
            for position in positions {
                guard let pair = position.array, pair.count >= 2, let x = pair[0].number, let y = pair[1].number,
                    (-180...180).contains(x), (-90...90).contains(y)
                else { throw malformed(path, feature) }
                points.append(GeoPoint(longitude: x, latitude: y))
            }
            if points.count > 1, points[0] == points[points.count - 1] { points.removeLast() }
            if points.count >= 3 { polygon.append(points) }
        }
        return polygon
    }
}
