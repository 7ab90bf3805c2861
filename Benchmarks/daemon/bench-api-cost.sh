#!/usr/bin/env bash
# What one GET /v1/attributes costs a geoattrd binary, beside others in the same run: the CPU
# time the daemon spends per request (its utime + stime from /proc over the load, divided by the
# requests answered) and the heap allocations per request (heaptrack's count over a second load,
# start-up included: a few thousand against a few hundred thousand requests). 64 keep-alive
# connections, static location, the same load generator as bench-api.sh (uds-load.c).
# Usage: Benchmarks/daemon/bench-api-cost.sh [SECONDS] BINARY...   (default 4 s per run)
#   e.g. bench-api-cost.sh 4 .build/release/geoattrd /tmp/geoattrd-earlier
#   ROUNDS=N   measure the binaries in turn N times (default 1), then give each one's median CPU
#              per request: on a shared machine one run of each varies by 10% or more
#   PIN=1      the daemon on CPU 0 and the load generator on CPU 1 (taskset), so that neither
#              takes the other's core
# Needs heaptrack (apt-get install heaptrack) for the allocation figure (first round only);
# without it, CPU only.
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=4
if [[ "${1:-}" =~ ^[0-9]+$ ]]; then seconds=$1; shift; fi
[ $# -gt 0 ] || { echo "usage: bench-api-cost.sh [SECONDS] BINARY..." >&2; exit 64; }
work=$(mktemp -d)
daemon=
trap 'kill $daemon 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
gcc -O2 -o "$work/uds-load" Benchmarks/daemon/uds-load.c
printf 'gpsd:\n  enabled: false\nstatic:\n  latitude: 47.3769\n  longitude: 8.5417\napi:\n  max_connections: 2048\nlog:\n  level: warning\n' >"$work/c.yaml"
hz=$(getconf CLK_TCK)

rounds=${ROUNDS:-1}
daemon_cpu=
load_cpu=
if [ "${PIN:-}" = 1 ]; then
    daemon_cpu="taskset -c 0"
    load_cpu="taskset -c 1"
fi

start() { # PREFIX BINARY
    rm -rf "$work/s" "$work/api.sock"
    mkdir -p "$work/s"
    $daemon_cpu $1 "$2" --config "$work/c.yaml" --state-dir "$work/s" --state-file "$work/s/state" --socket "$work/api.sock" >"$work/daemon.log" 2>&1 &
    daemon=$!
    for _ in $(seq 1 200); do [ -S "$work/api.sock" ] && break; sleep 0.05; done
    sleep 0.5
}

for round in $(seq 1 "$rounds"); do
for binary in "$@"; do
    start "" "$binary"
    before=$(awk '{print $14 + $15}' /proc/$daemon/stat)
    line=$($load_cpu "$work/uds-load" "$work/api.sock" /v1/attributes 64 "$seconds")
    after=$(awk '{print $14 + $15}' /proc/$daemon/stat)
    kill $daemon; wait $daemon 2>/dev/null || true
    requests=$(echo "$line" | awk '{print $4}')
    cpu=$(awk -v t=$((after - before)) -v hz="$hz" -v r="$requests" 'BEGIN { printf "%.2f", t * 1e6 / hz / r }')
    allocations=-
    if [ "$round" = 1 ] && command -v heaptrack >/dev/null; then
        start "heaptrack -o $work/heap" "$binary"
        heaptrack_requests=$("$work/uds-load" "$work/api.sock" /v1/attributes 64 "$seconds" | awk '{print $4}')
        # The daemon, not heaptrack's wrapper script: the wrapper passes no signal on.
        pkill -INT -f -- "--socket $work/api.sock"; wait $daemon 2>/dev/null || true
        total=$(sed -n 's/^[[:space:]]*allocations:[[:space:]]*\([0-9]*\).*/\1/p' "$work/daemon.log" | head -n 1)
        allocations=$(awk -v a="$total" -v r="$heaptrack_requests" 'BEGIN { printf "%.1f", a / r }')
        rm -f "$work"/heap*
    fi
    daemon=
    echo "$binary: $(echo "$line" | awk '{print $5}') req/s, $cpu us CPU per request, $allocations allocations per request"
    echo "$binary $cpu" >>"$work/cpu"
done
done
if [ "$rounds" -gt 1 ]; then
    for binary in "$@"; do
        median=$(awk -v b="$binary" '$1 == b { print $2 }' "$work/cpu" | sort -n |
            awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
        echo "$binary: median $median us CPU per request over $rounds rounds"
    done
fi
