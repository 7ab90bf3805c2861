/// Every key the daemon knows, in the order of config/geoattrd.yaml. A key in the file or the
/// environment that is not here is an error, never ignored: a misspelt `access` key would
/// otherwise leave everyone at the default.
package enum ConfigurationKeys {
    package static let all = ConfigurationKey.allCases

    package static let byName: [String: ConfigurationKey] = Dictionary(all.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })

    /// `GEOATTRD_*` variables that belong to geoattrd's other tools, not to the daemon's
    /// configuration: allowed in the daemon's environment.
    package static let otherVariables: Set<String> = ["GEOATTRD_INDEX", "GEOATTRD_SOCKET"]

    /// The error for a name that is not a key, with the nearest valid name when one is close.
    static func unknown(_ name: String, as spelled: String? = nil) -> ConfigurationError {
        let candidates = all.map(\.name)
        var hint = ""
        if let nearest = nearest(to: name, in: candidates) {
            hint = spelled == nil ? " (did you mean \(nearest)?)" : " (did you mean \(byName[nearest]?.environmentVariable ?? nearest)?)"
        }
        let shown = spelled ?? name
        return ConfigurationError(key: shown.utf8.count <= 200 ? shown : String(shown.prefix(200)) + "...", problem: "unknown key\(hint); unknown keys are refused so that a typo never changes what clients may see")
    }

    /// The candidate with the smallest edit distance, if it is small for the name's length. A
    /// key nested under a valid key (`access.rules.uid:1001`, a list written as a map) suggests
    /// that key.
    static func nearest(to name: String, in candidates: [String]) -> String? {
        if let parent = candidates.first(where: { name.hasPrefix($0 + ".") }) { return parent }
        // A name far longer than any key is no typo of one (and the distance is quadratic).
        guard name.utf8.count <= 64 else { return nil }
        let scored = candidates.map { ($0, editDistance(name, $0)) }.min { $0.1 < $1.1 }
        guard let (best, distance) = scored, distance <= max(2, best.count / 4) else { return nil }
        return best
    }

    /// Levenshtein distance over UTF-8 bytes (names are ASCII).
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a.utf8), b = Array(b.utf8)
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)
                current[j] = min(previous[j] + 1, current[j - 1] + 1, substitution)
            }
            swap(&previous, &current)
        }
        return previous[b.count]
    }
}
