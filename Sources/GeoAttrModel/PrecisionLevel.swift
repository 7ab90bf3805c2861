/// How precise a location a client may see (GeoClue's per-application accuracy levels,
/// without D-Bus). Each level includes the ones below it.
public enum PrecisionLevel: String, Sendable, Hashable, Codable, CaseIterable, Comparable {
    case none
    case country
    case region
    case locality
    case postal
    case exact

    private var rank: Int {
        switch self {
        case .none: 0
        case .country: 1
        case .region: 2
        case .locality: 3
        case .postal: 4
        case .exact: 5
        }
    }

    public static func < (lhs: PrecisionLevel, rhs: PrecisionLevel) -> Bool { lhs.rank < rhs.rank }
}

/// What one client is entitled to.
public struct Grant: Sendable, Hashable {
    public var level: PrecisionLevel
    /// Below `exact`, coordinates rounded to this many decimals may be shown; `nil`: none.
    public var coordinateDecimals: Int?
    /// May force refreshes and change the state.
    public var mayMutate: Bool

    /// The levels at which rounded coordinates can be shown: between exact and country.
    public static let levelsWithDecimals: Set<PrecisionLevel> = [.postal, .locality, .region]

    public init(level: PrecisionLevel, coordinateDecimals: Int? = nil, mayMutate: Bool = false) {
        self.level = level
        self.coordinateDecimals = coordinateDecimals
        self.mayMutate = mayMutate
    }
}
