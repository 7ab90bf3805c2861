import GeoIndex

/// The postal centroids as the index stores them: the point grid of their records and the table
/// of the shapes their codes are numbers in.
struct PostalGrid {
    private(set) var grid = PointGridBuilder(cellSize: 0.1)
    /// `PSHP`: per country, the string offset of its shape or `IndexFormat.noShape`.
    let shapeTable: [UInt8]
    let kept: Int
    let countries: Int
    let shapedCountries: Int

    /// `regions` holds each centroid's region code index, in the order of `centroids`.
    init(centroids: [(centroid: PostalRegions.Centroid, code: String)], regions: [UInt16], countryCount: Int, strings: inout StringTable) {
        // Of centroids at one stored position, with one country and one region, the reader only
        // ever answers with the first (it takes the first of equally near ones): the others are
        // left out, and so are their strings.
        struct StoredAt: Hashable {
            var position: PointGridBuilder.Position
            var country: UInt16
            var region: UInt16
        }
        var occupied: Set<StoredAt> = []
        var stored: [(centroid: PostalRegions.Centroid, code: String, region: UInt16, position: PointGridBuilder.Position)] = []
        for ((centroid, code), region) in zip(centroids, regions) {
            let position = grid.position(latitude: centroid.latitude, longitude: centroid.longitude)
            guard occupied.insert(StoredAt(position: position, country: centroid.country, region: region)).inserted else { continue }
            stored.append((centroid, code, region, position))
        }
        let shapes = PostalCodeShapes.common(stored.lazy.map { (country: $0.centroid.country, code: $0.code) })
        for (centroid, code, region, position) in stored {
            var payload = ByteWriter()
            let reference = shapes[centroid.country] == nil ? strings.offset(of: code) : PostalCodeShape.value(of: code)
            payload.u32(UInt32(centroid.country) << 24 | reference)
            payload.u16(region)
            grid.add(at: position, payload: payload.data)
        }
        var table = ByteWriter()
        table.u32(UInt32(countryCount))
        for index in 0..<countryCount {
            table.u32(shapes[UInt16(index)].map { strings.offset(of: String(decoding: $0, as: UTF8.self)) } ?? IndexFormat.noShape)
        }
        shapeTable = table.data
        kept = stored.count
        countries = Set(stored.map(\.centroid.country)).count
        shapedCountries = shapes.count
    }
}
