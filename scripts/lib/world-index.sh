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

# ensure_world_index: world_index as this tree builds it, fetched and built only when it is not
# current (the first run, or a new format); what the build prints goes to standard error.
ensure_world_index() {
    if world_index_current; then
        echo "world index: $world_index is current" >&2
    else
        bash scripts/fetch-geodata.sh >&2 && bash scripts/build-world-index.sh >&2
    fi
}
