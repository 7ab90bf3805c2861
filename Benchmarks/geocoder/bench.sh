#!/usr/bin/env bash
# The geocoder's benchmarks (not timed tests). Prints every figure docs/performance.md quotes, each after
# the command that produced it. Needs scripts/fetch-geodata.sh first; installs the peer (PyPI
# reverse_geocoder 1.5.1, with numpy/scipy) and timezonefinder into the cache venv.
# Lookups run pinned to one core (taskset -c 1).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
CACHE="${GEODATA_CACHE:-$ROOT/cache/geodata}"
BENCH="$ROOT/cache/bench"
cd "$ROOT"
mkdir -p "$BENCH"
"$CACHE/venv/bin/python" -c "import reverse_geocoder, timezonefinder" 2>/dev/null || \
    "$CACHE/venv/bin/pip" install --quiet reverse_geocoder==1.5.1 timezonefinder==9.0.0 timezonefinder-data==3.2026.3.post1

run() { echo "\$ $*"; "$@"; echo; }

swift build -c release -j 1 --product geoattrctl >/dev/null
swift build -c release -j 1 --product geoindex-bench >/dev/null
BIN="$(swift build -c release --show-bin-path)"

echo "== machine: $(nproc) cores, $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg)"
run /usr/bin/time -f "build with postal: %e s wall, %U s user, %M kB max RSS" "$BIN/geoattrctl" index build --data "$CACHE/out" --out "$CACHE/world.gidx"
run /usr/bin/time -f "build without postal: %e s wall, %U s user, %M kB max RSS" "$BIN/geoattrctl" index build --data "$CACHE/out" --out "$CACHE/world-nopostal.gidx" --no-postal
run ls -l "$CACHE/world.gidx" "$CACHE/world-nopostal.gidx"

for set in populated land uniform track; do
    run taskset -c 1 "$BIN/geoindex-bench" lookup "$CACHE/world.gidx" --set "$set" --places "$CACHE/out/cities.txt"
done

"$BIN/geoindex-bench" points 1000000 --set populated --places "$CACHE/out/cities.txt" > "$BENCH/populated-1m.csv"
"$BIN/geoindex-bench" points 1000000 --set land --index "$CACHE/world.gidx" > "$BENCH/land-1m.csv"
"$BIN/geoindex-bench" points 1000000 --set track --places "$CACHE/out/cities.txt" > "$BENCH/track-1m.csv"
# batch LABEL OUTPUT COMMAND...: times COMMAND over SET-1m.csv (the loop's $set) and prints lines/s.
batch() {
    local label=$1 output=$2 start end lines
    shift 2
    echo "\$ time $label < $set-1m.csv > out.jsonl"
    start=$(date +%s.%N)
    "$@" < "$BENCH/$set-1m.csv" > "$output"
    end=$(date +%s.%N)
    lines=$(wc -l < "$output")
    python3 -c "print(f'geoindex batch ($set, $label): {$lines} lines in {$end - $start:.2f} s = {$lines / ($end - $start):,.0f} lines/s')"
    echo
}
for set in populated land track; do
    batch "taskset -c 1 geoattrctl lookup --batch --index world.gidx" "$BENCH/geoindex-$set.jsonl" \
        taskset -c 1 "$BIN/geoattrctl" lookup --batch --index "$CACHE/world.gidx"
    # Every core the machine has (one job per core, the default without taskset); same output.
    batch "geoattrctl lookup --batch --jobs $(nproc) --index world.gidx" "$BENCH/geoindex-$set-jobs.jsonl" \
        "$BIN/geoattrctl" lookup --batch --jobs "$(nproc)" --index "$CACHE/world.gidx"
    cmp "$BENCH/geoindex-$set.jsonl" "$BENCH/geoindex-$set-jobs.jsonl" && echo "output identical" && echo
    run taskset -c 1 "$CACHE/venv/bin/python" Benchmarks/geocoder/peer_bench.py "$BENCH/$set-1m.csv" "$BENCH/peer-$set.jsonl"
done

run "$CACHE/venv/bin/python" Benchmarks/geocoder/accuracy.py --index "$CACHE/world.gidx" --geoindex "$BIN/geoattrctl" --n 20000
run "$CACHE/venv/bin/python" Benchmarks/geocoder/border_bands.py --index "$CACHE/world.gidx" --geoattrctl "$BIN/geoattrctl"
