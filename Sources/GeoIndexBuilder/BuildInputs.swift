/// The source files a build reads. Each is in an upstream format (GeoJSON, GeoNames TSV,
/// iso-codes JSON) or the fetch script's conversion to one, so fresher data needs no code change.
public struct BuildInputs: Sendable {
    /// Admin-0 polygons: GeoJSON features with `country` (or `iso_a2` / `ISO_A2`) and optional
    /// `split` ("RS,XK": zones covering two countries, resolved with the admin-1 country).
    public var countryPolygons: String
    /// Admin-1 polygons (Natural Earth `states_provinces` GeoJSON) with `iso_a2` and `iso_3166_2`.
    public var admin1Polygons: String?
    /// Debian iso-codes `iso_3166-2.json`, used to validate and roll up region codes.
    public var isoSubdivisions: String?
    /// GeoNames cities TSV (`cities500.txt` layout).
    public var places: String?
    /// GeoNames postal TSV (`allCountries.txt` layout).
    public var postalCodes: String?
    /// Country -> continent: `CC<TAB>XX` lines or GeoNames `countryInfo.txt`.
    public var continents: String?
    /// Provenance lines `name<TAB>version<TAB>licence` copied into the index metadata.
    public var sources: String?

    public init(
        countryPolygons: String, admin1Polygons: String? = nil, isoSubdivisions: String? = nil,
        places: String? = nil, postalCodes: String? = nil, continents: String? = nil, sources: String? = nil
    ) {
        self.countryPolygons = countryPolygons
        self.admin1Polygons = admin1Polygons
        self.isoSubdivisions = isoSubdivisions
        self.places = places
        self.postalCodes = postalCodes
        self.continents = continents
        self.sources = sources
    }

    /// The file names `scripts/fetch-geodata.sh` writes into its output directory.
    public static func fetchedData(directory: String) -> BuildInputs {
        func file(_ name: String) -> String? {
            let path = directory + "/" + name
            return FileIO.exists(path) ? path : nil
        }
        return BuildInputs(
            countryPolygons: directory + "/countries.geojson",
            admin1Polygons: file("admin1.geojson"), isoSubdivisions: file("iso_3166-2.json"), places: file("cities.txt"),
            postalCodes: file("postal.txt"), continents: file("continents.tsv"), sources: file("sources.tsv"))
    }
}

/// Choices that change what goes into the index.
public struct BuildOptions: Sendable {
    /// Keep only these ISO 3166-1 alpha-2 countries (nil: the whole world).
    public var countries: Set<String>?
    public var includePostalCodes: Bool
    /// Margin of border-layer cells as a share of the cell height (boundary margins are exact up
    /// to it and a lower bound beyond).
    public var relativeCellMargin: Double
    /// A cell with more vertices than this is split (trades size for lookup time).
    public var leafVertexLimit: Int
    /// Fixed build date for reproducible output (default: now, UTC).
    public var buildDate: String?
    /// Places below this population are left out (smaller index, coarser rural localities).
    public var minimumPopulation: UInt32 = 0
    /// Keep places that a bigger place always outranks (`DominatedPlaces`); they change no answer.
    public var keepDominatedPlaces = false
    /// Write the postal distance floors (`DistanceFloorGrid`): faster postal searches, same answers.
    public var postalDistanceFloors = true

    public init(
        countries: Set<String>? = nil, includePostalCodes: Bool = true,
        relativeCellMargin: Double = 0.02,
        leafVertexLimit: Int = 128, buildDate: String? = nil
    ) {
        self.countries = countries
        self.includePostalCodes = includePostalCodes
        self.relativeCellMargin = relativeCellMargin
        self.leafVertexLimit = leafVertexLimit
        self.buildDate = buildDate
    }
}

/// What a build produced, for the console and the README.
public struct BuildReport: Sendable {
    public var fileSize: Int
    public var lines: [String]
    /// Share of admin-1 units (in countries that have ISO 3166-2 subdivisions) with a valid code.
    public var regionCoverage: Double
    /// Countries with ISO 3166-2 subdivisions where no admin-1 unit got a code.
    public var countriesWithoutRegionCodes: [String]
}
