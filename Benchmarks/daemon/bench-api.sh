#!/usr/bin/env bash
# Load benchmark of the socket API: GET /v1/attributes over the Unix socket with 1,
# 64 and 512 keep-alive connections against a release build of geoattrd serving a static
# location, each next to the yardstick the target is stated against: uds-reference.c (beside
# this script), a minimal one-thread epoll server in C answering a fixed 300-byte body, measured
# in the same run by the same load generator (uds-load.c: one thread, epoll; it prints its own
# CPU share). The target is half the reference's requests/s at 64 connections with p50 <= 1 ms;
# the ratio is printed because absolute figures differ from machine to machine.
# Usage: Benchmarks/daemon/bench-api.sh [SECONDS] [ROUNDS]  (default 10 s per run, 1 round; the
# machine's noise is several percent from run to run, so take the median of a few rounds.
# CONNECTIONS="64" limits the runs to those counts.)
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-10}
rounds=${2:-1}
swift build -c release --product geoattrd >&2
work=$(mktemp -d)
daemon=
reference=
trap 'kill $daemon $reference 2>/dev/null; wait $daemon $reference 2>/dev/null; rm -rf "$work"' EXIT
gcc -O2 -o "$work/uds-load" Benchmarks/daemon/uds-load.c
gcc -O2 -o "$work/uds-reference" Benchmarks/daemon/uds-reference.c
printf 'gpsd:\n  enabled: false\nstatic:\n  latitude: 47.3769\n  longitude: 8.5417\napi:\n  max_connections: 2048\nlog:\n  level: warning\n' >"$work/c.yaml"

wait_for_socket() {
    for _ in $(seq 1 200); do [ -S "$1" ] && return 0; sleep 0.05; done
    echo "bench-api: $1 did not appear" >&2
    return 1
}

# One server at a time, so that each has the machine's two cores to itself and the load generator.
for round in $(seq 1 "$rounds"); do
    for connections in ${CONNECTIONS:-1 64 512}; do
        rm -f "$work/reference.sock" "$work/api.sock"
        "$work/uds-reference" "$work/reference.sock" &
        reference=$!
        wait_for_socket "$work/reference.sock"
        ref_line=$("$work/uds-load" "$work/reference.sock" /v1/attributes "$connections" "$seconds")
        kill $reference; wait $reference 2>/dev/null || true
        reference=

        .build/release/geoattrd --config "$work/c.yaml" --state-dir "$work" --state-file "$work/state" --socket "$work/api.sock" &
        daemon=$!
        wait_for_socket "$work/api.sock"
        sleep 0.5
        line=$("$work/uds-load" "$work/api.sock" /v1/attributes "$connections" "$seconds")
        kill $daemon; wait $daemon 2>/dev/null || true
        daemon=

        echo "reference  $ref_line"
        echo "geoattrd   $line"
        awk -v r="$ref_line" -v g="$line" 'BEGIN {
            split(r, a, " "); split(g, b, " ");
            printf "round %d, %d connections: geoattrd at %.1f%% of the reference (target >= 50%% at 64)\n", '"$round"', '"$connections"', 100 * b[5] / a[5] }'
    done
done
