# Sourced, from the repository's root: world_index, the file scripts/build-world-index.sh
# writes, in GEODATA_CACHE (CI keeps it outside the clone), default cache/geodata.
world_index=$(realpath -m "${GEODATA_CACHE:-cache/geodata}/world.gidx")
