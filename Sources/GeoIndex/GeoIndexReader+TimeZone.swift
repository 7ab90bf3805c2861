extension GeoIndexReader {
    /// The IANA time zone of a country-layer area, and whether it is the only zone of the
    /// country the point resolved to (`isAlternative`: the area's alternative country). Nil
    /// when the file has no `TZNM` (written before it) or the area no name.
    @inline(__always)
    func timeZone(area: UInt32, isAlternative: Bool) -> (name: String?, coversCountry: Bool?) {
        guard let entry = zoneNames?.u32(Int(area) * 4), entry != IndexFormat.noZoneName,
            let name = strings.shortString(Int(entry & IndexFormat.zoneNameOffsetMask))
        else { return (nil, nil) }
        let flag = isAlternative ? IndexFormat.zoneCoversAlternative : IndexFormat.zoneCoversCountry
        return (name, entry & flag != 0 ? true : nil)
    }
}
