import GeoIndex

/// The shape each country's postal codes are stored in (see `PostalCodeShape`): only a country
/// whose every code has the one shape gets it; the others keep their codes as strings.
enum PostalCodeShapes {
    static func common(_ codes: some Sequence<(country: UInt16, code: String)>) -> [UInt16: [UInt8]] {
        var shapes: [UInt16: [UInt8]] = [:]
        var mixed: Set<UInt16> = []
        for (country, code) in codes where !mixed.contains(country) {
            guard let shape = PostalCodeShape.shape(of: code), shapes[country].map({ $0 == shape }) ?? true else {
                mixed.insert(country)
                shapes[country] = nil
                continue
            }
            shapes[country] = shape
        }
        return shapes
    }
}
