#!/usr/bin/env bash
# The back office's figures (docs/backoffice.md): builds the wheel and a venv with it (pyarrow,
# pandas, pyspark, duckdb 1.5.5 and its spatial extension), writes the point sets into
# cache/bench (1 M populated, 1 M random worldwide, 1 M within 1 km of a border, 2 M populated for
# Spark), compares the three doors with geoattrctl on the 1 M sets (compare.py), then times them
# and the peer (bench.py). Needs scripts/fetch-geodata.sh and scripts/build-world-index.sh first.
#   bash Benchmarks/backoffice/run.sh [compare|bench]     (default: both)
set -euo pipefail
cd "$(dirname "$0")/../.."
what=${1:-all}
cache=${GEODATA_CACHE:-cache/geodata}
bench=cache/bench
mkdir -p "$bench"
source scripts/lib/world-index.sh
[ -f "$world_index" ] || { echo "run.sh: no world index at $world_index: scripts/fetch-geodata.sh && scripts/build-world-index.sh" >&2; exit 1; }

swift build -c release -j 1 --product geoattrctl >&2
swift build -c release -j 1 --product geoindex-bench >&2
bin=$(swift build -c release --show-bin-path)
wheel=$(realpath "$(bash scripts/build-wheel.sh .build-wheel/out | tail -n 1)")
source scripts/lib/python-venv.sh
python=$(cached_venv bench-venv "$wheel" pyarrow==26.0.1 pandas==2.3.3 pyspark==4.1.1 duckdb==1.5.5 duckdb-extension-spatial==1.5.5)

points() {  # points FILE COUNT SET: geoindex-bench's point set, written once
    [ -s "$bench/$1" ] || "$bin/geoindex-bench" points "$2" --set "$3" --seed 42 --places "$cache/out/cities.txt" >"$bench/$1"
}
points populated-1m.csv 1000000 populated
points uniform-1m.csv 1000000 uniform
points populated-2m.csv 2000000 populated
[ -s "$bench/border-1m.csv" ] ||
    (cd Benchmarks/geocoder && GEODATA_CACHE=$(realpath "$cache") "$(realpath "$cache")/venv/bin/python" border_points.py 1000000) >"$bench/border-1m.csv"

if [ "$what" != bench ]; then
    "$python" Benchmarks/backoffice/compare.py --index "$world_index" --geoattrctl "$bin/geoattrctl" \
        "$bench/populated-1m.csv" "$bench/uniform-1m.csv" "$bench/border-1m.csv"
fi
if [ "$what" != compare ]; then
    "$python" Benchmarks/backoffice/bench.py --index "$world_index" --geoattrctl "$bin/geoattrctl" \
        --geoindex-bench "$bin/geoindex-bench" --points "$bench/populated-1m.csv" --spark-points "$bench/populated-2m.csv" \
        --data "$cache/out"
fi
