# Sourced, from the repository's root: world_index, the file scripts/build-world-index.sh
# writes, in GEODATA_CACHE (CI keeps it outside the clone), default cache/geodata.
world_index=$(realpath -m "${GEODATA_CACHE:-cache/geodata}/world.gidx")

# world_index_current: whether world_index was made by this tree's builder, in this tree's
# format (its metadata names both: "builder<TAB>geoindex 0.4 (format 6)"), read from the file
# itself, so that no binary needs building to know. Else it is built again
# (scripts/fetch-geodata.sh, scripts/build-world-index.sh).
world_index_current() {
    local builder format
    builder=$(sed -n 's/^ *public static let builderName = "\(.*\)"$/\1/p' Sources/GeoIndexBuilder/GeoIndexBuilder.swift)
    format=$(sed -n '/^public enum IndexFormat/,/^}/ s/^    public static let version: UInt32 = \([0-9]*\)$/\1/p' Sources/GeoIndex/IndexFormat.swift)
    [ -n "$builder" ] && [ -n "$format" ] && [ -s "$world_index" ] &&
        LC_ALL=C grep -qaF "$(printf 'builder\t%s (format %s)' "$builder" "$format")" "$world_index"
}
