import GeoIndex

/// `TZNM`: each time-zone area's IANA name, and whether that zone is the only one of its
/// country, which decides whether the name may be shown to a client that may see only the
/// country.
enum ZoneNameTable {
    static func section(
        zones: [(country: UInt16, alternative: UInt16)], names: [String?], strings: inout StringTable
    ) -> [UInt8] {
        // Every zone a country's areas name, its alternative country's included: a zone spanning
        // two countries (Asia/Bangkok: TH and VN) is one of each one's zones.
        var zonesOfCountry: [UInt16: Set<String>] = [:]
        for (zone, name) in zip(zones, names) {
            guard let name else { continue }
            zonesOfCountry[zone.country, default: []].insert(name)
            if zone.alternative != IndexFormat.noIndex { zonesOfCountry[zone.alternative, default: []].insert(name) }
        }
        func isOnlyZone(of country: UInt16) -> Bool { zonesOfCountry[country]?.count == 1 }
        var table = ByteWriter()
        table.u32(UInt32(zones.count))
        for (zone, name) in zip(zones, names) {
            guard let name else {
                table.u32(IndexFormat.noZoneName)
                continue
            }
            var entry = strings.offset(of: name) & IndexFormat.zoneNameOffsetMask
            if isOnlyZone(of: zone.country) { entry |= IndexFormat.zoneCoversCountry }
            if zone.alternative != IndexFormat.noIndex, isOnlyZone(of: zone.alternative) { entry |= IndexFormat.zoneCoversAlternative }
            table.u32(entry)
        }
        return table.data
    }
}
