import GeoIndex

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Places that `LocalityRule` can never name, so the index need not store them.
///
/// A place P is dominated by a bigger place Q of the same country when, for every point where P
/// could be the answer, Q is reached and scores higher:
/// - Q reaches every point within max(reach(P), fallback radius) of P: then wherever P is
///   reached, and wherever P could be the nearest-place fallback, Q is reached, so the fallback
///   is never used there;
/// - at such a point, at distance d from P, Q is at most d + D away (D: from P to Q), and
///   pop(Q) / (d + D + 1 km)^2 > pop(P) / (d + 1 km)^2 for every d >= 0 holds exactly when
///   sqrt(pop(Q) / pop(P)) > 1 + D / 1 km (the worst case is d = 0).
/// Populations are compared as the index stores them (`IndexFormat.populationCode`), and D gets a
/// margin for the reader's flat-earth distances, whose scale follows the query's latitude.
/// Suburbs and neighbourhoods of large cities are the typical case (about 6% of cities500).
enum DominatedPlaces {
    struct Candidate {
        var latitude: Double
        var longitude: Double
        var country: UInt16
        var population: UInt32
    }

    /// D is stretched by this and padded by `distancePadding` metres.
    static let distanceFactor = 1.01
    static let distancePadding = 50.0
    /// Only places that reach this far can dominate anything (the fallback radius).
    static var minimumDominatorReach: Double { LocalityRule.fallbackRadius }

    /// Indices of the dominated places.
    static func find(_ places: [Candidate]) -> Set<Int> {
        let stored = places.map { IndexFormat.population(code: IndexFormat.populationCode($0.population)) }
        // Dominators in a 1-degree grid; their reach is at most 40 km, under half a degree of latitude.
        var grid: [Int: [Int]] = [:]
        for (index, place) in places.enumerated() where LocalityRule.reach(population: stored[index]) >= minimumDominatorReach {
            grid[key(row: row(place.latitude), column: column(place.longitude)), default: []].append(index)
        }
        var dominated: Set<Int> = []
        for (index, place) in places.enumerated() {
            let needed = max(LocalityRule.reach(population: stored[index]), LocalityRule.fallbackRadius)
            let metersY = CellGeometry.metersPerDegreeLatitude
            let metersX = max(metersY * cos(place.latitude * .pi / 180), 1)
            let placeRow = row(place.latitude)
            let placeColumn = column(place.longitude)
            search: for dr in -1...1 {
                for dc in -1...1 {
                    guard let candidates = grid[key(row: placeRow + dr, column: (placeColumn + dc + 360) % 360)] else { continue }
                    for other in candidates where other != index {
                        let dominator = places[other]
                        guard dominator.country == place.country, stored[other] > stored[index] else { continue }
                        var dx = abs(dominator.longitude - place.longitude)
                        if dx > 180 { dx = 360 - dx }
                        let dy = dominator.latitude - place.latitude
                        let distance = ((dx * metersX) * (dx * metersX) + (dy * metersY) * (dy * metersY)).squareRoot()
                            * distanceFactor + distancePadding
                        guard LocalityRule.reach(population: stored[other]) >= distance + needed else { continue }
                        let ratio = (Double(stored[other]) / Double(max(stored[index], 1))).squareRoot()
                        if ratio > 1 + distance / 1_000 {
                            dominated.insert(index)
                            break search
                        }
                    }
                }
            }
        }
        return dominated
    }

    private static func row(_ latitude: Double) -> Int { Int((latitude + 90).rounded(.down)) }
    private static func column(_ longitude: Double) -> Int { (Int((longitude + 180).rounded(.down)) % 360 + 360) % 360 }
    private static func key(row: Int, column: Int) -> Int { row * 360 + column }
}
