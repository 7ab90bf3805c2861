#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
public import GeoPlaces

/// An opened geo index: a read-only memory mapping, checked at open, queried without allocation
/// beyond the returned strings. Safe to share between threads and tasks.
///
/// Opening validates the header, its checksum and the section directory (no parse step: the
/// file is used in place). Every later read is bounds-checked, so a file corrupted after the
/// header check still cannot crash a lookup; it can only omit attributes. A file that shrinks
/// after the open (copied over in place, truncated) reads as zeros past its new end rather than
/// killing the process, and `isIntact` turns false: a caller that must not answer from such a
/// file asks it after its lookups.
/// `verifyContents()` checks the whole-file checksum when the caller can afford reading it all.
public final class GeoIndexReader: Sendable {
    public let path: String
    public let formatVersion: UInt32

    private let file: MappedFile
    private let strings: ByteView
    private let metadata: ByteView
    private let countries: ByteView
    private let zones: ByteView
    /// `TZNM` (`timeZone(area:isAlternative:)`).
    private let zoneNames: ByteView
    private let neRegions: ByteView
    private let regions: ByteView
    private let countryLayer: AreaLayer
    private let regionLayer: AreaLayer
    private let majorPlaces: PointGrid
    private let minorPlaces: PointGrid
    private let postal: PointGrid?
    private let postalFloors: DistanceFloorGrid?
    /// Per country, the string offset of the shape its postal codes are numbers in, or `noShape`;
    /// nil without postal codes.
    private let postalShapes: ByteView?
    private let contentChecksum: UInt64

    /// Opens and validates an index file.
    /// - Throws: `GeoIndexError` for a missing, truncated, foreign, wrong-version or corrupt file.
    public init(path: String) throws(GeoIndexError) {
        let file = try MappedFile(path: path)
        let bytes = file.bytes
        let (version, contentChecksum, sections) = try Self.sections(of: bytes, path: path)
        func section(_ tag: IndexFormat.Section) throws(GeoIndexError) -> ByteView {
            guard let view = sections[tag.rawValue] else {
                throw .corrupt(path: path, detail: "required section \(tag) is missing")
            }
            return view
        }
        func table(_ tag: IndexFormat.Section, entrySize: Int) throws(GeoIndexError) -> ByteView {
            let view = try section(tag)
            guard let count = view.u32(0), let entries = view.slice(4, Int(count) * entrySize) else {
                throw .corrupt(path: path, detail: "table \(tag) is larger than its section")
            }
            return entries
        }
        func layer(_ tag: IndexFormat.Section) throws(GeoIndexError) -> AreaLayer {
            guard let layer = AreaLayer(section: try section(tag)) else {
                throw .corrupt(path: path, detail: "area layer \(tag) has an invalid header")
            }
            return layer
        }
        func grid(_ tag: IndexFormat.Section, recordSize: Int) throws(GeoIndexError) -> PointGrid {
            guard let grid = PointGrid(section: try section(tag), expectedRecordSize: recordSize) else {
                throw .corrupt(path: path, detail: "point grid \(tag) has an invalid header")
            }
            return grid
        }
        self.path = path
        self.formatVersion = version
        self.file = file
        self.contentChecksum = contentChecksum
        strings = try section(.strings)
        metadata = try section(.metadata)
        countries = try table(.countries, entrySize: 8)
        zones = try table(.zones, entrySize: 4)
        zoneNames = try table(.zoneNames, entrySize: 4)
        neRegions = try table(.neRegions, entrySize: 4)
        regions = try table(.regions, entrySize: 8)
        countryLayer = try layer(.countryLayer)
        regionLayer = try layer(.regionLayer)
        majorPlaces = try grid(.majorPlaces, recordSize: IndexFormat.placeRecordSize)
        minorPlaces = try grid(.minorPlaces, recordSize: IndexFormat.placeRecordSize)
        postal = sections[IndexFormat.Section.postalCodes.rawValue].flatMap {
            PointGrid(section: $0, expectedRecordSize: IndexFormat.postalRecordSize)
        }
        postalFloors = sections[IndexFormat.Section.postalFloors.rawValue].flatMap(DistanceFloorGrid.init(section:))
        postalShapes = postal != nil ? try table(.postalShapes, entrySize: 4) : nil
        // A file that shrank between the size check and the reads above gave zeros, not itself.
        guard file.isIntact else { throw .changedUnderMapping(path: path) }
    }

    /// False once any read of the file has found it shorter than it was at the open (every answer
    /// since may come from zeros), or once the file has been written since the open (a copy over
    /// it in place: the directory read at the open may not fit it). It stays false; open the file
    /// again once it is whole.
    public var isIntact: Bool { file.isIntact }

    /// The header, checked (magic, version, size, checksum), and the section directory, each
    /// section bounds-checked against the file.
    private static func sections(
        of bytes: ByteView, path: String
    ) throws(GeoIndexError) -> (version: UInt32, contentChecksum: UInt64, sections: [UInt32: ByteView]) {
        guard let magic = bytes.slice(0, IndexFormat.magic.count),
            Array(magic.rawBuffer) == IndexFormat.magic
        else { throw .notAnIndex(path: path) }
        guard let version = bytes.u32(IndexFormat.Header.version),
            let sectionCount = bytes.u32(IndexFormat.Header.sectionCount),
            let declaredSize = bytes.u64(IndexFormat.Header.fileSize),
            let headerChecksum = bytes.u64(IndexFormat.Header.headerChecksum),
            let contentChecksum = bytes.u64(IndexFormat.Header.contentChecksum)
        else { throw .notAnIndex(path: path) }
        guard version == IndexFormat.version else {
            throw .unsupportedVersion(path: path, found: version, supported: IndexFormat.version)
        }
        guard declaredSize == UInt64(bytes.count) else {
            throw .truncated(path: path, expectedSize: declaredSize, actualSize: UInt64(bytes.count))
        }
        guard sectionCount <= 64 else { throw .corrupt(path: path, detail: "section count \(sectionCount) is out of range") }
        let directoryEnd = IndexFormat.headerSize + Int(sectionCount) * IndexFormat.directoryEntrySize
        guard directoryEnd <= bytes.count else { throw .corrupt(path: path, detail: "section directory runs past the end") }
        guard Self.headerChecksum(bytes, directoryEnd: directoryEnd) == headerChecksum else {
            throw .checksumMismatch(path: path, part: "header")
        }
        var sections: [UInt32: ByteView] = [:]
        for index in 0..<Int(sectionCount) {
            let entry = IndexFormat.headerSize + index * IndexFormat.directoryEntrySize
            guard let tag = bytes.u32(entry), let offset = bytes.u64(entry + 8), let length = bytes.u64(entry + 16),
                offset >= UInt64(directoryEnd), offset <= UInt64(bytes.count), length <= UInt64(bytes.count) - offset,
                let view = bytes.slice(Int(offset), Int(length))
            else { throw .corrupt(path: path, detail: "section \(index) lies outside the file") }
            sections[tag] = view
        }
        return (version, contentChecksum, sections)
    }

    /// Checksum of the header (its own field zeroed; the content checksum is covered) and the
    /// section directory.
    static func headerChecksum(_ bytes: ByteView, directoryEnd: Int) -> UInt64 {
        var copy = Array(UnsafeRawBufferPointer(start: bytes.base, count: min(directoryEnd, bytes.count)))
        for i in IndexFormat.Header.headerChecksum..<(IndexFormat.Header.headerChecksum + 8) where i < copy.count {
            copy[i] = 0
        }
        var checksum = Checksum64()
        copy.withUnsafeBytes { checksum.update($0) }
        return checksum.value
    }

    /// Lets go of the index pages lookups have mapped into this process. The next lookup maps
    /// the few it needs again (minor faults while the page cache holds them). For a caller that
    /// looks up rarely, so that the pages do not stay its memory between lookups.
    public func releaseResidentPages() {
        file.releaseResidentPages()
    }

    /// Reads the whole file and compares it with the content checksum in the header.
    public func verifyContents() throws(GeoIndexError) {
        let bytes = file.bytes
        guard let count = bytes.u32(IndexFormat.Header.sectionCount) else { throw .notAnIndex(path: path) }
        let directoryEnd = IndexFormat.headerSize + Int(count) * IndexFormat.directoryEntrySize
        guard let content = bytes.slice(directoryEnd, bytes.count - directoryEnd) else {
            throw .corrupt(path: path, detail: "section directory runs past the end")
        }
        var checksum = Checksum64()
        checksum.update(content.rawBuffer)
        guard file.isIntact else { throw .changedUnderMapping(path: path) }
        guard checksum.value == contentChecksum else { throw .checksumMismatch(path: path, part: "content") }
    }

    /// Version, provenance, counts and size of the index.
    public var info: GeoIndexInfo {
        GeoIndexInfo(
            metadata: String(decoding: metadata.rawBuffer, as: UTF8.self), formatVersion: formatVersion,
            fileSize: UInt64(file.bytes.count))
    }

    // MARK: - Lookup

    /// The geo attributes of a point. Non-finite or out-of-range coordinates give `.empty`.
    public func place(latitude: Double, longitude: Double) -> GeoPlace {
        guard latitude.isFinite, longitude.isFinite, latitude >= -90, latitude <= 90, longitude >= -180, longitude <= 180 else {
            return .empty
        }
        let (latitude, longitude) = Self.inset(latitude: latitude, longitude: longitude)
        let metersX = CellGeometry.metersPerDegreeLongitudeAtEquator * cos(latitude * Double.pi / 180)
        // A point inside a country's polygon, its territorial sea included, gets that country;
        // open sea (in no country's polygon) gets nothing.
        guard let countryProbe = countryLayer.probe(latitude: latitude, longitude: longitude, metersPerDegreeLongitude: metersX),
            let zone = countryProbe.area, let primary = zones.u16(Int(zone) * 4), let alternative = zones.u16(Int(zone) * 4 + 2)
        else { return .empty }

        var country = primary
        let acceptRegion = { (area: UInt32) -> Bool in
            let codeCountry = self.regionCodeIndex(neArea: area).flatMap(self.regionCountry)
            return codeCountry == primary || (alternative != IndexFormat.noIndex && codeCountry == alternative)
        }
        // The margin is the smaller of the two edge distances, so region edges beyond the
        // country's can be skipped; only a rejected region needs the full search for a neighbour.
        var regionProbe = regionLayer.probe(
            latitude: latitude, longitude: longitude, metersPerDegreeLongitude: metersX,
            distanceLimit: countryProbe.edgeDistance, accept: acceptRegion)
        if let probe = regionProbe, probe.area.map(acceptRegion) != true {
            regionProbe = regionLayer.probe(
                latitude: latitude, longitude: longitude, metersPerDegreeLongitude: metersX, accept: acceptRegion)
        }
        // Zones spanning two countries (Bangkok: TH/VN, Belgrade: RS/XK, Jerusalem: IL/PS) take the
        // country of the Natural Earth admin-1 polygon when it is one of the two.
        if alternative != IndexFormat.noIndex, let area = regionProbe?.area, let neCountry = neRegionCountry(area),
            neCountry == alternative || neCountry == primary
        {
            country = neCountry
        }
        guard let countryEntry = countries.slice(Int(country) * 8, 8) else { return .empty }

        var result = GeoPlace()
        result.countryCode = code(countryEntry, at: 0)
        result.continentCode = code(countryEntry, at: 2)
        var margin = countryProbe.edgeDistance
        var regionIndex: UInt16?
        if let probe = regionProbe {
            if let area = probe.area, let index = regionCodeIndex(neArea: area), regionCountry(index) == country {
                regionIndex = index
                margin = min(margin, probe.edgeDistance)
            } else if let area = probe.nearestAccepted, let index = regionCodeIndex(neArea: area), regionCountry(index) == country {
                // Near a border the coarse admin-1 polygon can spill over: take the nearest region of the
                // resolved country so region never contradicts country.
                regionIndex = index
            }
            if let index = regionIndex { result.regionCode = regionCode(index) }
        }
        result.boundaryMarginMeters = margin.isFinite ? margin : nil
        (result.timeZone, result.timeZoneCoversCountry) = timeZone(area: zone, isAlternative: country != primary)
        result.localityName = locality(latitude: latitude, longitude: longitude, metersX: metersX, country: country)
        if let cutoff = countryEntry.u16(4), cutoff > 0, let spacing = countryEntry.u16(6) {
            // Clamped so a crafted table cannot turn one lookup into a scan of half the world.
            let cutoffMeters = min(Double(cutoff) * 100, Self.maximumPostalCutoff)
            result.postalCode = postalCode(
                latitude: latitude, longitude: longitude, metersX: metersX, country: country, cutoff: cutoffMeters,
                firstRadius: min(max(Double(spacing) * 100, 500), cutoffMeters), region: regionIndex)
        }
        return result
    }

    /// Where a valid point is looked up. The data's own edges run along +-180; 22 m inside (two
    /// quantisation steps) keeps the point off them, and +180 and -180 are the same meridian. On
    /// a pole the point sits on the polygons' bottom or top edge, where the crossing test is
    /// undefined and 11 m quantisation blurs it: 110 m inside answers robustly.
    @inline(__always)
    package static func inset(latitude: Double, longitude: Double) -> (latitude: Double, longitude: Double) {
        (min(max(latitude, -89.999), 89.999), longitude == 180 || longitude == -180 ? -179.9998 : min(max(longitude, -179.9998), 179.9998))
    }

    /// The builder's largest postal cut-off (see PostalCutoff) with room to spare.
    static let maximumPostalCutoff = 300_000.0

    @inline(__always)
    private func code(_ entry: ByteView, at offset: Int) -> String? {
        guard let first = entry.u8(offset), let second = entry.u8(offset + 1), first != 0, second != 0 else { return nil }
        return String(unsafeUninitializedCapacity: 2) { buffer in
            buffer[0] = first
            buffer[1] = second
            return 2
        }
    }

    @inline(__always)
    private func neRegionCountry(_ area: UInt32) -> UInt16? {
        guard let value = neRegions.u16(Int(area) * 4), value != IndexFormat.noIndex else { return nil }
        return value
    }

    @inline(__always)
    private func regionCodeIndex(neArea area: UInt32) -> UInt16? {
        guard let value = neRegions.u16(Int(area) * 4 + 2), value != IndexFormat.noIndex else { return nil }
        return value
    }

    @inline(__always)
    private func regionCountry(_ index: UInt16) -> UInt16? {
        regions.u16(Int(index) * 8)
    }

    @inline(__always)
    private func regionHasPostalCodes(_ index: UInt16) -> Bool {
        (regions.u16(Int(index) * 8 + 2) ?? 0) & IndexFormat.regionHasPostalCodes != 0
    }

    /// The IANA time zone of a country-layer area, and whether it is the only zone of the
    /// country the point resolved to (`isAlternative`: the area's alternative country). Nil
    /// when the area has no name.
    @inline(__always)
    private func timeZone(area: UInt32, isAlternative: Bool) -> (name: String?, coversCountry: Bool?) {
        guard let entry = zoneNames.u32(Int(area) * 4), entry != IndexFormat.noZoneName,
            let name = strings.shortString(Int(entry & IndexFormat.zoneNameOffsetMask))
        else { return (nil, nil) }
        let flag = isAlternative ? IndexFormat.zoneCoversAlternative : IndexFormat.zoneCoversCountry
        return (name, entry & flag != 0 ? true : nil)
    }

    private func regionCode(_ index: UInt16) -> String? {
        guard let offset = regions.u32(Int(index) * 8 + 4) else { return nil }
        return strings.shortString(Int(offset))
    }

    private func locality(latitude: Double, longitude: Double, metersX: Double, country: UInt16) -> String? {
        var bestScore = -1.0
        var bestName: Int?
        var nearestDistance = LocalityRule.fallbackRadius
        var nearestName: Int?
        func consider(_ grid: PointGrid, _ offset: Int, _ distance: Double) {
            guard let reference = grid.records.u32(offset + 4), UInt16(reference >> 24) == country,
                let populationCode = grid.records.u16(offset + 2)
            else { return }
            let population = IndexFormat.population(code: populationCode)
            let name = Int(reference & 0x00FF_FFFF)
            if LocalityRule.reaches(population: population, distance: distance) {
                let score = LocalityRule.score(population: population, distance: distance)
                if score > bestScore {
                    bestScore = score
                    bestName = name
                }
            }
            if distance < nearestDistance {
                nearestDistance = distance
                nearestName = name
            }
        }
        majorPlaces.forEach(near: latitude, longitude, radius: LocalityRule.majorSearchRadius, metersPerDegreeLongitude: metersX) { consider(majorPlaces, $0, $1) }
        minorPlaces.forEach(near: latitude, longitude, radius: LocalityRule.minorReach, metersPerDegreeLongitude: metersX) { consider(minorPlaces, $0, $1) }
        if bestName == nil && nearestName == nil {
            minorPlaces.forEach(near: latitude, longitude, radius: LocalityRule.fallbackRadius, metersPerDegreeLongitude: metersX) { consider(minorPlaces, $0, $1) }
        }
        guard let name = bestName ?? nearestName else { return nil }
        return strings.shortString(name)
    }

    /// The nearest centroid of the country whose region is the point's (or unknown); failing
    /// that, the nearest of the country: a code from across a region border only when the
    /// point's own region has none within the cut-off.
    private func postalCode(
        latitude: Double, longitude: Double, metersX: Double, country: UInt16, cutoff: Double, firstRadius: Double,
        region: UInt16?
    ) -> String? {
        guard let postal else { return nil }
        // By country alone for a region without centroids of its own (which would otherwise widen
        // every search to the cut-off).
        let region = region.flatMap { regionHasPostalCodes($0) ? $0 : nil }
        var nearestDistance = Double.infinity
        var nearestCode: Int?
        // Without a region nothing is in-region, so only the country's nearest is tracked.
        var nearestInRegionDistance = region == nil ? -1 : Double.infinity
        var nearestInRegionCode: Int?
        // Search a window of the country's typical centroid spacing first: a hit there is the
        // nearest overall; widen it only when it is empty. No window below the floor can hold one.
        var radius = min(firstRadius, cutoff)
        if let floor = postalFloors?.floorMeters(latitude: latitude, longitude: longitude) {
            if floor > cutoff { return nil }
            radius = max(radius, floor)
        }
        while true {
            postal.forEach(near: latitude, longitude, radius: radius, metersPerDegreeLongitude: metersX) { offset, distance in
                guard distance < nearestDistance || distance < nearestInRegionDistance,
                    let reference = postal.records.u32(offset + 2), UInt16(reference >> 24) == country
                else { return }
                let code = Int(reference & 0x00FF_FFFF)
                if distance < nearestDistance {
                    nearestDistance = distance
                    nearestCode = code
                }
                if let region, distance < nearestInRegionDistance,
                    let recordRegion = postal.records.u16(offset + 6), recordRegion == region || recordRegion == IndexFormat.noIndex
                {
                    nearestInRegionDistance = distance
                    nearestInRegionCode = code
                }
            }
            let found = region == nil ? nearestCode : nearestInRegionCode
            if found != nil || radius >= cutoff { break }
            radius = min(radius * 2, cutoff)
        }
        return (nearestInRegionCode ?? nearestCode).flatMap { postalCodeText($0, country: country) }
    }

    /// A postal record's code: its number in the country's shape, or the string it refers to.
    private func postalCodeText(_ reference: Int, country: UInt16) -> String? {
        guard let shapeOffset = postalShapes?.u32(Int(country) * 4) else { return nil }
        if shapeOffset == IndexFormat.noShape { return strings.shortString(reference) }
        guard let length = strings.u8(Int(shapeOffset)), let shape = strings.slice(Int(shapeOffset) + 1, Int(length)) else {
            return nil
        }
        return PostalCodeShape.code(shape: shape.rawBuffer, value: UInt32(reference))
    }
}
