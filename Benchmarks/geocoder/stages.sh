#!/usr/bin/env bash
# Where a lookup's time goes: `geoindex-bench lookup` with stages of the reader's place() switched
# off, one row per set of switches (docs/performance.md, "Where the time goes"):
#   all | all but postal | all but locality | country, region | country
# The reader has no such switches. stage-ablation.patch, beside this script, adds them
# (GEO_NO_POSTAL, GEO_NO_LOCALITY, GEO_NO_REGION in the environment) to a copy of
# the tree in .build-stages/src (tracked and new files as they are in the checkout), from which
# geoindex-bench is built (release, one job) into .build-stages/build: the checkout and its .build
# are left alone. The answers of a lookup with a stage switched off are incomplete: the copy is
# for measuring only.
#
#   bash Benchmarks/geocoder/stages.sh [--index FILE] [--places FILE] [--points N] [SET...]
#     SET       land, populated, uniform or track (default: land populated)
#     --index   default cache/geodata/world.gidx (scripts/build-world-index.sh)
#     --places  default cache/geodata/out/cities.txt (scripts/fetch-geodata.sh)
#     --points  points per set (default: geoindex-bench's, 100,000)
# Lookups run pinned to one core (taskset -c 1), as in bench.sh.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)

usage() {
    sed -n '2,/^set -euo/p' "$root/Benchmarks/geocoder/stages.sh" | sed '$d; s/^# \{0,1\}//'
}
index=$root/cache/geodata/world.gidx
places=$root/cache/geodata/out/cities.txt
points=()
sets=()
while [ $# -gt 0 ]; do
    case $1 in
    -h | --help) usage; exit 0 ;;
    --index) index=${2:?--index needs a file}; shift 2 ;;
    --places) places=${2:?--places needs a file}; shift 2 ;;
    --points) points=(--points "${2:?--points needs a number}"); shift 2 ;;
    land | populated | uniform | track) sets+=("$1"); shift ;;
    *) usage >&2; exit 64 ;;
    esac
done
[ ${#sets[@]} -gt 0 ] || sets=(land populated)
[ -f "$index" ] || { echo "stages: no index at $index: scripts/fetch-geodata.sh && scripts/build-world-index.sh" >&2; exit 1; }
[ -f "$places" ] || { echo "stages: no places at $places: scripts/fetch-geodata.sh" >&2; exit 1; }
index=$(realpath "$index")
places=$(realpath "$places")
cd "$root"

patch=Benchmarks/geocoder/stage-ablation.patch
work=.build-stages
src=$work/src
rm -rf "$src"
mkdir -p "$src"
git ls-files -z --cached --others --exclude-standard | while IFS= read -r -d '' file; do
    [ -e "$file" ] && printf '%s\0' "$file"
done | tar --null -T - -cf - | tar -xf - -C "$src"
[ ! -f Package.resolved ] || cp Package.resolved "$src/"
if ! git apply --directory="$src" "$patch"; then
    echo "stages: $patch no longer applies to Sources/GeoIndex: update its switches for the reader as it is now" >&2
    exit 1
fi
build=(swift build -c release --package-path "$src" --scratch-path "$work/build")
"${build[@]}" -j 1 --product geoindex-bench >&2
bench=$("${build[@]}" --show-bin-path)/geoindex-bench

rows=(
    "all|"
    "all but postal|GEO_NO_POSTAL=1"
    "all but locality|GEO_NO_LOCALITY=1"
    "country, region|GEO_NO_POSTAL=1 GEO_NO_LOCALITY=1"
    "country|GEO_NO_POSTAL=1 GEO_NO_LOCALITY=1 GEO_NO_REGION=1"
)
echo "== machine: $(nproc) cores, $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg); index $index"
printf '%-10s %-28s %10s %12s  %s\n' set "stages run" "p50 (us)" "lookups/s" switches
for set in "${sets[@]}"; do
    for row in "${rows[@]}"; do
        label=${row%%|*} switches=${row#*|}
        # shellcheck disable=SC2086
        output=$(env $switches taskset -c 1 "$bench" lookup "$index" --set "$set" --places "$places" "${points[@]}")
        p50=$(sed -n 's/^lookup latency: p50 \([0-9.]*\) us.*/\1/p' <<<"$output")
        rate=$(sed -n 's/^throughput: \([0-9]*\) lookups.*/\1/p' <<<"$output")
        printf '%-10s %-28s %10s %12s  %s\n' "$set" "$label" "${p50:-?}" "${rate:-?}" "${switches:--}"
    done
done
