/// A populated place from a GeoNames cities dump.
public struct PlaceRecord: Sendable {
    public var name: String
    public var latitude: Double
    public var longitude: Double
    public var countryCode: String
    public var population: UInt32

    public init(name: String, latitude: Double, longitude: Double, countryCode: String, population: UInt32) {
        self.name = name
        self.latitude = latitude
        self.longitude = longitude
        self.countryCode = countryCode
        self.population = population
    }
}

/// A postal-code centroid from a GeoNames postal dump.
public struct PostalRecord: Sendable {
    public var code: String
    public var latitude: Double
    public var longitude: Double
    public var countryCode: String

    public init(code: String, latitude: Double, longitude: Double, countryCode: String) {
        self.code = code
        self.latitude = latitude
        self.longitude = longitude
        self.countryCode = countryCode
    }
}

enum GeoNamesReader {
    /// Feature codes that are not places a person names as "where I am": sections of a city
    /// (neighbourhoods), historical, abandoned and destroyed places.
    static let excludedFeatureCodes: Set<String> = ["PPLX", "PPLH", "PPLQ", "PPLW", "PPLCH"]

    /// GeoNames `cities*.txt` / `allCountries.txt` layout (19 columns).
    static func places(path: String) throws(BuildError) -> [PlaceRecord] {
        var places: [PlaceRecord] = []
        try TabularReader.forEachLine(path: path) { (line, fields, bytes) throws(BuildError) in
            guard fields.count >= 15 else {
                throw .malformedInput(path: path, line: line, detail: "expected the 19-column GeoNames layout, found \(fields.count) columns")
            }
            guard fields[6].elementsEqual("P".utf8) || fields[6].isEmpty,
                !excludedFeatureCodes.contains(TabularReader.string(fields[7]))
            else { return }
            guard let latitude = TabularReader.double(fields[4], in: bytes), let longitude = TabularReader.double(fields[5], in: bytes),
                (-90...90).contains(latitude), (-180...180).contains(longitude)
            else { throw .malformedInput(path: path, line: line, detail: "latitude/longitude are not valid numbers") }
            let population = TabularReader.integer(fields[14]) ?? 0
            let name = TabularReader.string(fields[1])
            guard !name.isEmpty, fields[8].count == 2 else { return }
            places.append(
                PlaceRecord(
                    name: name, latitude: latitude, longitude: longitude, countryCode: TabularReader.string(fields[8]),
                    population: UInt32(min(population, Int(UInt32.max)))))
        }
        return places
    }

    /// GeoNames postal `allCountries.txt` layout (12 columns).
    static func postalCodes(path: String) throws(BuildError) -> (records: [PostalRecord], organisationCodes: Int) {
        var records: [PostalRecord] = []
        var organisations = 0
        try TabularReader.forEachLine(path: path) { (line, fields, bytes) throws(BuildError) in
            guard fields.count >= 11 else {
                throw .malformedInput(path: path, line: line, detail: "expected the 12-column GeoNames postal layout, found \(fields.count) columns")
            }
            guard let latitude = TabularReader.double(fields[9], in: bytes), let longitude = TabularReader.double(fields[10], in: bytes),
                (-90...90).contains(latitude), (-180...180).contains(longitude), fields[0].count == 2, !fields[1].isEmpty
            else { return }
            if isOrganisation(TabularReader.string(fields[2])) {
                organisations += 1
                return
            }
            records.append(
                PostalRecord(
                    code: TabularReader.string(fields[1]), latitude: latitude, longitude: longitude,
                    countryCode: TabularReader.string(fields[0])))
        }
        return (records, organisations)
    }

    /// Words that mark a code assigned to one organisation (German Grosskunden codes and the like):
    /// such a centroid is one building, not an area a position can be in.
    static let organisationWords: Set<String> = [
        "gmbh", "mbh", "ag", "kg", "ohg", "gbr", "postfach", "grosskunde", "großkunde", "grosskunden", "großkunden",
        "ltd", "inc", "llc", "bank", "versicherung", "sparkasse", "postbox", "cedex",
    ]

    static func isOrganisation(_ name: String) -> Bool {
        var word = ""
        for character in name.lowercased() {
            if character.isLetter {
                word.append(character)
            } else {
                if organisationWords.contains(word) { return true }
                word = ""
            }
        }
        return organisationWords.contains(word)
    }
}
