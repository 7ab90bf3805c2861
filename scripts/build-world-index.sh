#!/usr/bin/env bash
# Builds the world index from the sources fetched by scripts/fetch-geodata.sh:
#   cache/geodata/world.gidx          (with postal codes)
#   cache/geodata/world-nopostal.gidx (without)
# The index is never committed; geoattrctl finds it here (see IndexLocator, docs/geocoder.md).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
CACHE="${GEODATA_CACHE:-$ROOT/cache/geodata}"
cd "$ROOT"
if [ ! -f "$CACHE/out/countries.geojson" ]; then
    echo "no fetched sources in $CACHE/out: run scripts/fetch-geodata.sh first" >&2
    exit 1
fi
# -j 1 leaves a core free on the 2-core build machines; CI, where nothing else builds at that
# point, sets WORLD_INDEX_BUILD_JOBS=2.
swift build -c release -j "${WORLD_INDEX_BUILD_JOBS:-1}" --product geoattrctl
BIN="$(swift build -c release --show-bin-path)/geoattrctl"
"$BIN" index build --data "$CACHE/out" --out "$CACHE/world.gidx" "$@"
"$BIN" index build --data "$CACHE/out" --out "$CACHE/world-nopostal.gidx" --no-postal "$@"
"$BIN" index info "$CACHE/world.gidx"
