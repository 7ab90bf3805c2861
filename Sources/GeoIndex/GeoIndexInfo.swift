/// Provenance and size of an index file, as shown by `geoindex info`.
public struct GeoIndexInfo: Sendable, Equatable {
    public struct Source: Sendable, Equatable {
        public var name: String
        public var version: String
        public var licence: String
    }

    public var formatVersion: UInt32
    public var fileSize: UInt64
    public var buildDate: String
    public var builder: String
    public var sources: [Source]
    /// Named counts (countries, regions, places, postal codes, layer vertices...).
    public var counts: [(name: String, value: String)]
    /// Attribution the data licences require wherever the data is shown.
    public var attribution: String

    public static func == (lhs: GeoIndexInfo, rhs: GeoIndexInfo) -> Bool {
        lhs.formatVersion == rhs.formatVersion && lhs.fileSize == rhs.fileSize && lhs.buildDate == rhs.buildDate
            && lhs.builder == rhs.builder && lhs.sources == rhs.sources && lhs.attribution == rhs.attribution
            && lhs.counts.map(\.name) == rhs.counts.map(\.name) && lhs.counts.map(\.value) == rhs.counts.map(\.value)
    }

    /// Parses the metadata section: `key<TAB>value` lines; `source` lines carry
    /// `name<TAB>version<TAB>licence`, `count` lines `name<TAB>value`.
    init(metadata: String, formatVersion: UInt32, fileSize: UInt64) {
        self.formatVersion = formatVersion
        self.fileSize = fileSize
        buildDate = ""
        builder = ""
        sources = []
        counts = []
        var attributionLines: [String] = []
        for line in metadata.split(separator: "\n", omittingEmptySubsequences: true) {
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard let key = fields.first else { continue }
            switch key {
            case "built" where fields.count >= 2: buildDate = fields[1]
            case "builder" where fields.count >= 2: builder = fields[1]
            case "source" where fields.count >= 4: sources.append(Source(name: fields[1], version: fields[2], licence: fields[3]))
            case "count" where fields.count >= 3: counts.append((fields[1], fields[2]))
            case "attribution" where fields.count >= 2: attributionLines.append(fields[1])
            default: continue
            }
        }
        attribution = attributionLines.joined(separator: "\n")
    }
}
