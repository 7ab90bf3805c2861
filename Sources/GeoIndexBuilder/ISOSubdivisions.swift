/// ISO 3166-2 subdivisions from Debian iso-codes (`iso_3166-2.json`): validation and roll-up.
///
/// Natural Earth admin-1 units are often second-level units (French departments, English
/// counties, Italian provinces). A resident names the first level instead, so codes roll up
/// through `parent` to the top of the hierarchy, except where the top level is only a
/// geographical grouping and people name the level below (`provinceLevelCountries`).
public struct ISOSubdivisions: Sendable {
    /// Countries whose top ISO level is a grouping, not what residents name: keep the province.
    /// Indonesia: ID-JW (Java) groups ID-JK, ID-JB...; the Philippines: regions group provinces,
    /// which people name.
    public static let provinceLevelCountries: Set<String> = ["ID", "PH"]

    private var parents: [String: String] = [:]
    private(set) var codes: Set<String> = []

    public init(path: String) throws(BuildError) {
        let document = try JSONParser.parse(file: path)
        guard let records = document["3166-2"]?.array else {
            throw .malformedInput(path: path, line: 0, detail: "expected an iso-codes 3166-2 document with a \"3166-2\" array")
        }
        for record in records {
            guard let code = record["code"]?.string else { continue }
            codes.insert(code)
            if let parent = record["parent"]?.string {
                // iso-codes writes parents both as "OCC" (suffix only) and as "GB-ENG".
                let country = code.split(separator: "-").first.map(String.init) ?? ""
                parents[code] = parent.contains("-") ? parent : "\(country)-\(parent)"
            }
        }
    }

    public init(codes: [String: String?]) {
        for (code, parent) in codes {
            self.codes.insert(code)
            if let parent { parents[code] = parent }
        }
    }

    public var countriesWithSubdivisions: Set<String> {
        Set(codes.compactMap { $0.split(separator: "-").first.map(String.init) })
    }

    /// The code a resident would name for `code`, or nil when `code` is not a valid ISO 3166-2 code.
    public func residentLevel(of code: String) -> String? {
        guard codes.contains(code) else { return nil }
        let country = String(code.prefix(2))
        if Self.provinceLevelCountries.contains(country) { return code }
        var current = code
        var steps = 0
        while let parent = parents[current], codes.contains(parent), steps < 8 {
            current = parent
            steps += 1
        }
        return current
    }
}
