/// Which populated place a person would name for a spot.
///
/// A place "reaches" as far as a radius that grows with the square root of its population
/// (1.5 km + 25 m per sqrt(inhabitant), at most 40 km: about 9 km for 100,000 people, 26 km for
/// a million). Among the places that reach the point, the one with the highest
/// population / (distance + 1 km)^2 wins: inside a big city the city outweighs its
/// neighbourhoods, while the core of a large suburb still names the suburb. With no place
/// reaching the point, the nearest place within 10 km is used; further away, none.
public enum LocalityRule {
    /// Places at or above this population are in the major grid, searched over `majorSearchRadius`.
    public static let majorPopulation: UInt32 = 50_000
    public static let majorSearchRadius = 40_000.0
    /// The largest reach of a place below `majorPopulation`.
    public static var minorReach: Double { reach(population: majorPopulation - 1) }
    public static let fallbackRadius = 10_000.0

    @inline(__always)
    public static func reach(population: UInt32) -> Double {
        min(1_500 + 25 * Double(population).squareRoot(), majorSearchRadius)
    }

    /// `distance <= reach(population)` without a square root (this runs for every candidate).
    @inline(__always)
    public static func reaches(population: UInt32, distance: Double) -> Bool {
        if distance <= 1_500 { return true }
        if distance > majorSearchRadius { return false }
        let root = (distance - 1_500) / 25
        return root * root <= Double(population)
    }

    @inline(__always)
    public static func score(population: UInt32, distance: Double) -> Double {
        let d = distance + 1_000
        return Double(max(population, 1)) / (d * d)
    }
}
