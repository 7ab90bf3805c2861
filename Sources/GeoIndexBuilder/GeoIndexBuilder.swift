#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import GeoIndex

/// Builds an index file from the sources in `BuildInputs`.
public enum GeoIndexBuilder {
    public static let builderName = "geoindex 0.4"

    public static func build(inputs: BuildInputs, options: BuildOptions = BuildOptions(), outputPath: String) throws(BuildError) -> BuildReport {
        var state = BuildState(options: options)
        try state.loadContinents(inputs.continents)
        try state.loadCountries(inputs.countryPolygons)
        try state.loadRegions(admin1: inputs.admin1Polygons, iso: inputs.isoSubdivisions)
        if let places = inputs.places { try state.loadPlaces(places) }
        if options.includePostalCodes, let postal = inputs.postalCodes { try state.loadPostalCodes(postal) }
        let bytes = try state.serialise(sources: inputs.sources)
        try FileIO.writeAtomically(bytes, to: outputPath)
        state.report.fileSize = bytes.count
        state.report.lines.append("wrote \(outputPath): \(bytes.count) bytes")
        return state.report
    }
}

/// Everything collected during one build; `serialise` turns it into sections.
private struct BuildState {
    let options: BuildOptions
    var report = BuildReport(fileSize: 0, lines: [], regionCoverage: 0, countriesWithoutRegionCodes: [])

    var countryIndex: [String: UInt16] = [:]
    var countryCodes: [String] = []
    var continents: [String: String] = [:]
    var postalCutoff: [UInt16: (cutoff: Double, spacing: Double)] = [:]
    var zones: [(country: UInt16, alternative: UInt16)] = []
    /// Each zone's IANA name, when its feature has one.
    var zoneNames: [String?] = []
    var zoneAreas: [(id: UInt32, polygons: [Polygon])] = []
    var neRegions: [(country: UInt16, region: UInt16)] = []
    var regionAreas: [(id: UInt32, polygons: [Polygon])] = []
    var regionCodes: [(country: UInt16, code: String)] = []
    var strings = StringTable()
    var majorPlaces = PointGridBuilder(cellSize: 0.5)
    var minorPlaces = PointGridBuilder(cellSize: 0.2)
    /// Postal centroids kept: position, country and code (gridded at serialisation, once the
    /// region layer can give each its region).
    var postalCentroids: [(centroid: PostalRegions.Centroid, code: String)] = []
    var organisationCodes = 0
    var counts: [(String, String)] = []

    /// Postal distance floors: half-degree cells (260 kB for the world), floors in whole kilometres.
    static let postalFloorCellSize = 0.5
    static let postalFloorUnit = 1_000.0
    /// Leaf quantisation of the OSM-derived borders (about 2 m: the source's borders are not simplified).
    static let borderResolution = 0.00002
    /// Leaf quantisation of Natural Earth layers (about 90 m; the source is simplified to ~1 km).
    static let naturalEarthResolution = 0.0008

    init(options: BuildOptions) {
        self.options = options
    }

    func wanted(_ code: String) -> Bool {
        options.countries.map { $0.contains(code) } ?? true
    }

    static func isCountryCode(_ code: String) -> Bool {
        code.utf8.count == 2 && code.utf8.allSatisfy { $0 >= 0x41 && $0 <= 0x5A }
    }

    mutating func country(_ code: String) -> UInt16 {
        if let index = countryIndex[code] { return index }
        let index = UInt16(countryCodes.count)
        countryCodes.append(code)
        countryIndex[code] = index
        return index
    }

    mutating func loadContinents(_ path: String?) throws(BuildError) {
        guard let path else { return }
        try TabularReader.forEachLine(path: path) { (_, fields, _) throws(BuildError) in
            // Either "CC<TAB>XX" or GeoNames countryInfo.txt (continent in column 9).
            let continent = fields.count >= 9 ? fields[8] : (fields.count >= 2 ? fields[1] : [])
            guard fields[0].count == 2, continent.count == 2 else { return }
            continents[TabularReader.string(fields[0])] = TabularReader.string(continent)
        }
    }

    mutating func loadCountries(_ path: String) throws(BuildError) {
        let features = try GeoJSONReader.read(path: path)
        var vertices = 0
        for feature in features {
            let code = feature.properties["country"] ?? feature.properties["iso_a2"] ?? feature.properties["ISO_A2"] ?? ""
            guard Self.isCountryCode(code) else { continue }
            let split = (feature.properties["split"] ?? "").split(separator: ",").map(String.init).filter(Self.isCountryCode)
            let alternativeCode = split.first { $0 != code }
            guard wanted(code) || alternativeCode.map(wanted) == true else { continue }
            let primary = country(code)
            let alternative = alternativeCode.map { country($0) } ?? IndexFormat.noIndex
            zoneAreas.append((UInt32(zones.count), feature.polygons))
            zones.append((primary, alternative))
            zoneNames.append(feature.properties["zone"].flatMap { $0.isEmpty ? nil : $0 })
            vertices += feature.polygons.reduce(0) { $0 + $1.reduce(0) { $0 + $1.count } }
        }
        guard !zones.isEmpty else {
            throw .missingInput("\(path) has no polygon feature with a two-letter `country`/`iso_a2` property (or none in --countries)")
        }
        counts.append(("country polygons", "\(zones.count) (\(vertices) vertices, \(countryCodes.count) countries)"))
        report.lines.append("admin-0: \(zones.count) polygons, \(vertices) vertices, \(countryCodes.count) countries")
        counts.append(("time zones", "\(Set(zoneNames.compactMap { $0 }).count)"))
    }

    mutating func loadRegions(admin1 path: String?, iso isoPath: String?) throws(BuildError) {
        guard let path else {
            report.lines.append("admin-1: no polygons given, no region codes")
            return
        }
        let iso = try isoPath.map { (p: String) throws(BuildError) in try ISOSubdivisions(path: p) }
        let features = try GeoJSONReader.read(path: path)
        var codeIndex: [String: UInt16] = [:]
        var withSubdivisions = 0
        var covered = 0
        var rejected = 0
        var countriesSeen: Set<String> = []
        var countriesCovered: Set<String> = []
        let subdivisionCountries = iso?.countriesWithSubdivisions ?? []
        for feature in features {
            let neCode = feature.properties["iso_a2"] ?? feature.properties["ISO_A2"] ?? ""
            guard !Self.isCountryCode(neCode) || wanted(neCode) else { continue }
            if options.countries != nil && !Self.isCountryCode(neCode) { continue }
            let neCountry = countryIndex[neCode] ?? IndexFormat.noIndex
            var region = IndexFormat.noIndex
            if subdivisionCountries.contains(neCode) {
                withSubdivisions += 1
                countriesSeen.insert(neCode)
            }
            if let raw = feature.properties["iso_3166_2"], !raw.isEmpty {
                // Without iso-codes the code is taken as given (fixtures); with it, it must validate.
                let resolved = iso.map { $0.residentLevel(of: raw) } ?? raw
                if let code = resolved, let codeCountry = countryIndex[String(code.prefix(2))] {
                    if let existing = codeIndex[code] {
                        region = existing
                    } else {
                        region = UInt16(regionCodes.count)
                        codeIndex[code] = region
                        regionCodes.append((codeCountry, code))
                    }
                    if subdivisionCountries.contains(neCode) {
                        covered += 1
                        countriesCovered.insert(neCode)
                    }
                } else if resolved == nil {
                    rejected += 1
                }
            }
            regionAreas.append((UInt32(neRegions.count), feature.polygons))
            neRegions.append((neCountry, region))
        }
        report.regionCoverage = withSubdivisions == 0 ? 0 : Double(covered) / Double(withSubdivisions)
        report.countriesWithoutRegionCodes = countriesSeen.subtracting(countriesCovered).sorted()
        let percent = (report.regionCoverage * 1000).rounded() / 10
        report.lines.append(
            "admin-1: \(neRegions.count) polygons, \(regionCodes.count) distinct region codes; \(covered)/\(withSubdivisions) units in countries with ISO 3166-2 subdivisions have a code (\(percent)%); \(rejected) codes failed iso-codes validation"
        )
        report.lines.append("admin-1: countries left without codes: \(report.countriesWithoutRegionCodes.joined(separator: " "))")
        counts.append(("admin-1 polygons", "\(neRegions.count)"))
        counts.append(("region codes", "\(regionCodes.count) (unit coverage \(percent)%)"))
    }

    mutating func loadPlaces(_ path: String) throws(BuildError) {
        let places = try GeoNamesReader.places(path: path)
        var eligible: [(place: PlaceRecord, country: UInt16)] = []
        for place in places where place.population >= options.minimumPopulation {
            guard let country = countryIndex[place.countryCode], country < 255 else { continue }
            eligible.append((place, country))
        }
        let dominated =
            options.keepDominatedPlaces
            ? []
            : DominatedPlaces.find(
                eligible.map { .init(latitude: $0.place.latitude, longitude: $0.place.longitude, country: $0.country, population: $0.place.population) })
        var kept = 0
        for (index, (place, country)) in eligible.enumerated() where !dominated.contains(index) {
            var payload = ByteWriter()
            payload.u16(IndexFormat.populationCode(place.population))
            payload.u32(UInt32(country) << 24 | strings.offset(of: place.name))
            if place.population >= LocalityRule.majorPopulation {
                majorPlaces.add(latitude: place.latitude, longitude: place.longitude, payload: payload.data)
            } else {
                minorPlaces.add(latitude: place.latitude, longitude: place.longitude, payload: payload.data)
            }
            kept += 1
        }
        counts.append(("places", "\(kept) (\(majorPlaces.count) with >= \(LocalityRule.majorPopulation) people; \(dominated.count) never named left out)"))
        report.lines.append("places: \(kept) of \(places.count) in indexed countries; \(dominated.count) that a bigger place always outranks left out")
    }

    mutating func loadPostalCodes(_ path: String) throws(BuildError) {
        let (records, organisations) = try GeoNamesReader.postalCodes(path: path)
        var seen: Set<String> = []
        var byCountry: [UInt16: [(Double, Double)]] = [:]
        for record in records {
            guard let country = countryIndex[record.countryCode], country < 255 else { continue }
            // Many codes list one centroid per place name; identical positions add nothing.
            let key = "\(record.countryCode)|\(record.code)|\(Int((record.latitude * 1000).rounded()))|\(Int((record.longitude * 1000).rounded()))"
            guard seen.insert(key).inserted else { continue }
            postalCentroids.append(
                (PostalRegions.Centroid(latitude: record.latitude, longitude: record.longitude, country: country), record.code))
            byCountry[country, default: []].append((record.latitude, record.longitude))
        }
        for (country, points) in byCountry {
            postalCutoff[country] = PostalCutoff.meters(for: points)
        }
        organisationCodes = organisations
        report.lines.append("postal: \(postalCentroids.count) centroids in \(byCountry.count) countries; \(organisations) organisation-only codes dropped")
    }

    mutating func serialise(sources: String?) throws(BuildError) -> [UInt8] {
        guard countryCodes.count < 255 else { throw .limitExceeded("more than 254 countries") }
        var writer = IndexWriter()

        // The border layers only need a margin proportional to the cell (their edge distance is
        // a lower bound beyond it).
        var countryLayer = AreaLayerBuilder(
            absoluteMargin: 0, relativeMargin: options.relativeCellMargin, maximumDepth: IndexFormat.maximumDepth,
            resolution: Self.borderResolution,
            leafVertexLimit: options.leafVertexLimit)
        try countryLayer.build(areas: zoneAreas)
        // Region margins are only a lower bound next to the country's: no extra reach needed.
        var regionLayer = AreaLayerBuilder(
            absoluteMargin: 0, relativeMargin: 0, maximumDepth: IndexFormat.maximumDepth,
            resolution: Self.naturalEarthResolution,
            leafVertexLimit: options.leafVertexLimit)
        try regionLayer.build(areas: regionAreas)
        for (name, layer) in [("country", countryLayer), ("region", regionLayer)] {
            let s = layer.statistics
            report.lines.append("\(name) layer: \(s.leaves) leaves, \(s.innerNodes) inner nodes, \(s.leafVertices) stored vertices")
            counts.append(("\(name) layer", "\(s.leaves) leaves, \(s.leafVertices) vertices"))
        }
        let regionSection = regionLayer.section()
        // Empty without postal codes (none are loaded then).
        let postalRegions = PostalRegions.resolve(
            postalCentroids.map(\.centroid), regionLayerSection: regionSection, neRegions: neRegions, regionCodes: regionCodes)
        var regionsWithPostalCodes = Set(postalRegions)
        regionsWithPostalCodes.remove(IndexFormat.noIndex)
        var regionTable = ByteWriter()
        regionTable.u32(UInt32(regionCodes.count))
        for (index, entry) in regionCodes.enumerated() {
            regionTable.u16(entry.country)
            regionTable.u16(regionsWithPostalCodes.contains(UInt16(index)) ? IndexFormat.regionHasPostalCodes : 0)
            regionTable.u32(strings.offset(of: entry.code))
        }

        writer.add(.countries, countryTable())
        writer.add(.zones, zoneTable())
        writer.add(.zoneNames, ZoneNameTable.section(zones: zones, names: zoneNames, strings: &strings))
        writer.add(.neRegions, naturalEarthRegionTable())
        writer.add(.regions, regionTable.data)
        writer.add(.countryLayer, countryLayer.section())
        writer.add(.regionLayer, regionSection)
        writer.add(.majorPlaces, majorPlaces.section(recordSize: IndexFormat.placeRecordSize))
        writer.add(.minorPlaces, minorPlaces.section(recordSize: IndexFormat.placeRecordSize))
        if !postalCentroids.isEmpty {
            let postal = PostalGrid(centroids: postalCentroids, regions: postalRegions, countryCount: countryCodes.count, strings: &strings)
            counts.append(
                (
                    "postal centroids",
                    "\(postal.kept) in \(postal.countries) countries, \(postal.shapedCountries) of them with codes stored as numbers (\(postalCentroids.count - postal.kept) at the stored position of an equal one left out, \(organisationCodes) organisation codes dropped)"
                ))
            report.lines.append("postal: \(postal.kept) centroids stored; \(postalCentroids.count - postal.kept) at the stored position of another of their country and region left out")
            report.lines.append("postal: \(postal.shapedCountries) countries store their codes as numbers in one shape")
            let tagged = postalRegions.count { $0 != IndexFormat.noIndex }
            report.lines.append(
                "postal: \(tagged) of \(postalRegions.count) centroids in a region with a code; \(regionsWithPostalCodes.count) of \(regionCodes.count) regions have centroids")
            writer.add(.postalCodes, postal.grid.section(recordSize: IndexFormat.postalRecordSize))
            writer.add(.postalShapes, postal.shapeTable)
            if options.postalDistanceFloors {
                writer.add(
                    .postalFloors,
                    DistanceFloorGridBuilder.section(
                        points: postal.grid.decodedPositions, cellSize: Self.postalFloorCellSize, unitMeters: Self.postalFloorUnit))
            }
        }
        // Last, so that it holds every count.
        writer.add(.metadata, metadata(sources: try sources.map { (p: String) throws(BuildError) in try FileIO.readTerminated(p) }))
        // Every reference into the table is a 24-bit offset.
        guard strings.data.count < 1 << 24 else { throw .limitExceeded("string table over 16 MiB") }
        writer.add(.strings, strings.data)
        return writer.serialise()
    }

    /// Each country: its code, continent and postal cutoff and spacing (in 100 m).
    private func countryTable() -> [UInt8] {
        var countryTable = ByteWriter()
        countryTable.u32(UInt32(countryCodes.count))
        for (index, code) in countryCodes.enumerated() {
            countryTable.bytes(Array(code.utf8))
            let continent = continents[code].map { Array($0.utf8) } ?? [0, 0]
            countryTable.bytes(continent.count == 2 ? continent : [0, 0])
            let postal = postalCutoff[UInt16(index)]
            countryTable.u16(postal.map { UInt16(min(max(($0.cutoff / 100).rounded(), 1), 65535)) } ?? 0)
            countryTable.u16(postal.map { UInt16(min(max(($0.spacing / 100).rounded(), 1), 65535)) } ?? 0)
        }
        return countryTable.data
    }

    /// Each time-zone area: its country and the alternative one.
    private func zoneTable() -> [UInt8] {
        var zoneTable = ByteWriter()
        zoneTable.u32(UInt32(zones.count))
        for zone in zones {
            zoneTable.u16(zone.country)
            zoneTable.u16(zone.alternative)
        }
        return zoneTable.data
    }

    /// Each Natural Earth region: its country and its ISO 3166-2 region.
    private func naturalEarthRegionTable() -> [UInt8] {
        var neTable = ByteWriter()
        neTable.u32(UInt32(neRegions.count))
        for entry in neRegions {
            neTable.u16(entry.country)
            neTable.u16(entry.region)
        }
        return neTable.data
    }

    func metadata(sources: [UInt8]?) -> [UInt8] {
        var text = "built\t\(options.buildDate ?? Self.now())\nbuilder\t\(GeoIndexBuilder.builderName) (format \(IndexFormat.version))\n"
        let sourceText = sources.map { String(decoding: $0.dropLast(), as: UTF8.self) } ?? ""
        for line in sourceText.split(separator: "\n") where !line.isEmpty {
            text += "source\t\(line)\n"
        }
        if let countries = options.countries { text += "count\tcountry filter\t\(countries.sorted().joined(separator: ","))\n" }
        for (name, value) in counts { text += "count\t\(name)\t\(value)\n" }
        text += "attribution\tPlaces and postal codes: GeoNames (geonames.org), licensed under CC BY 4.0.\n"
        text += "attribution\tCountry borders: (c) OpenStreetMap contributors, ODbL 1.0, via timezone-boundary-builder and timezonefinder-data.\n"
        text += "attribution\tRegions: Natural Earth (public domain). ISO 3166 codes: Debian iso-codes (LGPL-2.1+).\n"
        return Array(text.utf8)
    }

    static func now() -> String {
        var seconds = time(nil)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))Z"
    }
}
