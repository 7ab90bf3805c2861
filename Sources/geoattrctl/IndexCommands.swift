import ArgumentParser
import GeoIndex
import GeoIndexBuilder
import GeoIndexCLI

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// `geoattrctl index build|info`: the offline reverse-geocoding index.
struct IndexCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "index",
        abstract: "Build or inspect the offline reverse-geocoding index.",
        discussion: """
            Without an explicit file, the index is found in this order: $GEOATTRD_INDEX, \(IndexSearch.setupIndex) \
            (built by scripts/build-world-index.sh), \(IndexLocator.installedIndex).

            Data: GeoNames (CC BY 4.0), (c) OpenStreetMap contributors (ODbL), Natural Earth, iso-codes.
            """,
        subcommands: [IndexBuild.self, IndexInfo.self]
    )
}

struct IndexBuild: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "build", abstract: "Build an index file from the fetched sources.",
        discussion: "Exit codes: 0 built; 1 a source is missing or invalid, or the index cannot be written; 64 invalid arguments.")

    @Option(help: "Output index file.") var out: String
    @Option(help: "Directory written by scripts/fetch-geodata.sh.") var data: String = "cache/geodata/out"
    @Option(help: "Only these countries (ISO 3166-1 alpha-2, comma-separated).") var countries: String?
    @Flag(help: "Leave postal codes out (smaller index).") var noPostal = false
    @Option(help: "Leave out places with fewer people (smaller index, coarser rural localities).") var minPopulation: UInt32 = 0
    @Option(help: "Split area cells with more vertices than this (smaller: faster lookups, larger index).")
    var leafVertexLimit: Int = BuildOptions().leafVertexLimit
    @Option(help: "Admin-0 polygons (GeoJSON); default: DATA/countries.geojson.") var admin0: String?
    /// Accepted and ignored for one release: the index has no land layer since format 6.
    @Option(help: .hidden) var land: String?
    @Option(help: "Admin-1 polygons (GeoJSON); default: DATA/admin1.geojson.") var admin1: String?
    @Option(help: "iso-codes iso_3166-2.json; default: DATA/iso_3166-2.json.") var iso: String?
    @Option(help: "GeoNames cities TSV; default: DATA/cities.txt.") var places: String?
    @Option(help: "GeoNames postal TSV; default: DATA/postal.txt.") var postal: String?
    @Option(help: "Continents (CC<TAB>XX or GeoNames countryInfo.txt); default: DATA/continents.tsv.") var continents: String?

    func run() throws {
        var inputs = BuildInputs.fetchedData(directory: data)
        if let admin0 { inputs.countryPolygons = admin0 }
        if let admin1 { inputs.admin1Polygons = admin1 }
        if let iso { inputs.isoSubdivisions = iso }
        if let places { inputs.places = places }
        if let postal { inputs.postalCodes = postal }
        if let continents { inputs.continents = continents }
        var options = BuildOptions(includePostalCodes: !noPostal, leafVertexLimit: max(8, leafVertexLimit))
        options.minimumPopulation = minPopulation
        if let countries {
            options.countries = Set(countries.split(separator: ",").map { $0.trimmingPrefix(" ").uppercased() })
        }
        let report = try GeoIndexBuilder.build(inputs: inputs, options: options, outputPath: out)
        for line in report.lines { print(line) }
    }
}

struct IndexInfo: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "info", abstract: "Print an index's version, sources, build date, counts and size.",
        discussion: "Exit codes: 0 printed, checksums verified; 1 the index is missing, unreadable, of another format or corrupt; 64 invalid arguments.")

    @Argument(help: "Index file (default: the located index).") var file: String?

    func run() throws {
        let path = IndexSearch.locate(explicit: file)
        let reader = try GeoIndexReader(path: path)
        try reader.verifyContents()
        let info = reader.info
        print("index:    \(path)")
        print("format:   version \(info.formatVersion) (checksums verified)")
        print("size:     \(info.fileSize) bytes")
        print("built:    \(info.buildDate) by \(info.builder)")
        print("sources:")
        for source in info.sources { print("  - \(source.name) [\(source.version)] licence: \(source.licence)") }
        print("counts:")
        for count in info.counts { print("  \(count.name): \(count.value)") }
        print("attribution:")
        for line in info.attribution.split(separator: "\n") { print("  \(line)") }
    }
}

struct LookupCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lookup",
        abstract: "Look up one point, or `lat,lon` lines from stdin with --batch (one JSON object per line, in order).",
        discussion: """
            Without --index: $GEOATTRD_INDEX, then \(IndexSearch.setupIndex), then \(IndexLocator.installedIndex).

            Exit codes: 0 answered (with --batch, a line that is not a point gets an error object and \
            the run goes on); 1 the index is missing, unreadable, of another format or corrupt, or \
            it changed while it was open (nothing read from it after that is printed), or the output \
            cannot be written; 2 the point is out of range (an error object is printed); \
            64 invalid arguments.
            """)

    // Taken as raw strings so negative coordinates are not mistaken for options.
    @Argument(parsing: .allUnrecognized, help: "LAT LON or LAT,LON in decimal degrees.") var coordinates: [String] = []
    @Flag(help: "Read `lat,lon` lines from stdin.") var batch = false
    @Option(help: "Index file.") var index: String?
    /// Accepted and ignored: the country reaches as far as its polygon, the territorial sea
    /// included. Kept one release for the scripts that pass it.
    @Option(help: .hidden) var coastTolerance: Double?
    @Option(help: "With --batch: threads looking up at once (default: the CPUs this process may use, cgroup quota and affinity included, at most 16).")
    var jobs: Int?

    /// `LAT LON`, or `LAT,LON` as `--batch` reads it (spaces allowed around either number).
    var point: (latitude: Double, longitude: Double)? {
        if coordinates.count == 1 { return BatchLookup.coordinates(coordinates[0]) }
        guard coordinates.count == 2, let latitude = Double(coordinates[0]), let longitude = Double(coordinates[1]) else { return nil }
        return (latitude, longitude)
    }

    func validate() throws {
        if batch && !coordinates.isEmpty { throw ValidationError("--batch reads stdin; do not also give LAT LON") }
        if let jobs, !batch || jobs < 1 || jobs > 64 { throw ValidationError("--jobs takes 1 to 64, with --batch") }
        if !batch && point == nil {
            throw ValidationError("give LAT LON or LAT,LON in decimal degrees (e.g. lookup 49.61 6.13), or --batch to read lines from stdin")
        }
    }

    func run() throws {
        let reader = try GeoIndexReader(path: IndexSearch.locate(explicit: index))
        if batch {
            try BatchLookup(reader: reader, jobs: jobs ?? DefaultBatchJobs.count).run()
            return
        }
        guard let (latitude, longitude) = point else { return }
        guard latitude.isFinite, longitude.isFinite, abs(latitude) <= 90, abs(longitude) <= 180 else {
            var out: [UInt8] = []
            PlaceJSON.appendError(
                "coordinates out of range (latitude -90..90, longitude -180..180)", line: 1,
                input: Array(coordinates.joined(separator: ",").utf8), to: &out)
            print(String(decoding: out, as: UTF8.self))
            throw ExitCode(2)
        }
        let place = reader.place(latitude: latitude, longitude: longitude)
        guard reader.isIntact else { throw GeoIndexError.changedUnderMapping(path: reader.path) }
        print(PlaceJSON.render(place, latitude: latitude, longitude: longitude))
    }
}
