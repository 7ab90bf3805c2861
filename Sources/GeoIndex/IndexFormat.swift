/// Layout constants of the index file, shared by the reader and the builder.
///
/// All integers are little-endian. The file is a fixed header, a section directory and
/// 8-byte-aligned sections; see `docs/index-format.md` for the byte-level description.
public enum IndexFormat {
    public static let magic: [UInt8] = Array("GEOATTRX".utf8)
    /// 6: the country layer holds the land borders at the source's own resolution and reaches
    /// the territorial sea; every time-zone area has its name (`TZNM`).
    /// 5: a country whose postal codes all have one shape stores them as numbers (`PSHP`).
    /// 4: postal records carry their region, and each region says whether it has centroids.
    /// A reader reads the format of its own release only, so that what it answers is what its
    /// release was measured to answer; `geoattrd-geodata` of the same release provides it.
    public static let version: UInt32 = 6
    public static let headerSize = 64
    public static let directoryEntrySize = 24
    /// Offsets of the header fields.
    public enum Header {
        public static let version = 8
        public static let sectionCount = 12
        public static let fileSize = 16
        public static let headerChecksum = 24
        public static let contentChecksum = 32
    }

    /// Section tags (four ASCII characters read as a little-endian UInt32).
    public enum Section: UInt32, CaseIterable, Sendable {
        case metadata = 0x4154_454D  // "META"
        case strings = 0x5352_5453  // "STRS"
        case countries = 0x5952_5443  // "CTRY"
        case zones = 0x454E_4F5A  // "ZONE"
        case regions = 0x4E47_4552  // "REGN"
        case neRegions = 0x4731_4441  // "AD1G"
        case countryLayer = 0x4C59_5443  // "CTYL"
        case regionLayer = 0x4C47_4552  // "REGL"
        case majorPlaces = 0x4A41_4D50  // "PMAJ"
        case minorPlaces = 0x4E49_4D50  // "PMIN"
        case postalCodes = 0x5453_4F50  // "POST"
        /// Optional: without it postal searches are slower, not different.
        case postalFloors = 0x524C_4650  // "PFLR"
        /// With `POST`: per country, the shape its postal codes are stored in.
        case postalShapes = 0x5048_5350  // "PSHP"
        /// Beside `ZONE`: each time-zone area's IANA name.
        case zoneNames = 0x4D4E_5A54  // "TZNM"
    }

    /// The root grid of every area layer: one-degree cells, row 0 at the south pole.
    public static let rootColumns = 360
    public static let rootRows = 180
    /// Root cells are grouped in blocks of 8 x 8 degrees; a block whose cells are all the same
    /// uniform reference is stored as that reference alone (oceans, large interiors).
    public static let rootBlockSide = 8
    public static let rootBlockColumns = 45
    public static let rootBlockRows = 23
    /// Set in a block entry that points at the block's 64 root references.
    public static let rootBlockExpanded: UInt32 = 0x8000_0000
    /// Deepest quadtree level below a root cell (1/4096 degree, about 27 m).
    public static let maximumDepth = 12
    /// Quantisation range of point positions inside a point-grid cell (one byte: 44 m in the
    /// 0.1-degree place and postal cells, 220 m in the 0.5-degree cells of large places).
    public static let quantisationSteps: Double = 255
    /// Quantisation range of leaf vertices inside a cell's expanded rectangle (12 bits: about
    /// 30 m in a one-degree cell, under 4 m from depth 3 on, well inside the sources' accuracy).
    public static let leafSteps: Double = 4095
    // A leaf vertex is two zigzag-coded deltas from the previous vertex (the first from 0,0),
    // each one byte below 64 and two bytes (7 + 7 bits, low group first) up to 8191.

    /// Node references in an area layer: two tag bits, 30 payload bits.
    public enum NodeTag: UInt32 {
        case uniform = 0
        case inner = 1
        case leaf = 2
    }
    public static let noArea: UInt32 = 0x3FFF_FFFF
    /// Flag in a region entry's second u16: some postal centroid lies in the region (version 4).
    public static let regionHasPostalCodes: UInt16 = 0x0001
    public static let noIndex: UInt16 = 0xFFFF
    /// A country's entry in `PSHP` when its postal codes are strings.
    public static let noShape: UInt32 = 0xFFFF_FFFF
    /// A `TZNM` entry: the name's string offset in its low 24 bits, the flags above it.
    public static let zoneNameOffsetMask: UInt32 = 0x00FF_FFFF
    /// In a `TZNM` entry: the area's zone is the only zone of the area's country, or of its
    /// alternative country (a zone spanning two countries).
    public static let zoneCoversCountry: UInt32 = 1 << 24
    public static let zoneCoversAlternative: UInt32 = 1 << 25
    /// A `TZNM` entry of an area without a zone name.
    public static let noZoneName: UInt32 = 0x00FF_FFFF

    /// Size of one place record (dlat u8, dlon u8, population code u16, name reference u32).
    public static let placeRecordSize = 8
    /// Size of one postal record (dlat u8, dlon u8, code reference u32, region code index u16:
    /// the centroid's region as the reader resolves it, `noIndex` when unknown). The code
    /// reference is `country << 24` and the code's string offset, or its number when the
    /// country has a shape in `PSHP`.
    public static let postalRecordSize = 8

    /// Population in 16 bits: exact below 32,768, then in steps of 1,024 (up to 33.5 million).
    @inline(__always)
    public static func population(code: UInt16) -> UInt32 {
        code & 0x8000 == 0 ? UInt32(code) : UInt32(code & 0x7FFF) * 1024
    }

    public static func populationCode(_ population: UInt32) -> UInt16 {
        population < 0x8000 ? UInt16(population) : 0x8000 | UInt16(min((population + 512) / 1024, 0x7FFF))
    }
}
