#!/usr/bin/env bash
# Load benchmark of the socket API (issue #5): GET /v1/attributes over the Unix socket with 1,
# 64 and 512 keep-alive connections against a release build of geoattrd serving a static
# location. The load generator is bench/uds-load.c (one thread, epoll; it prints its own CPU
# share). Usage: scripts/bench-api.sh [SECONDS]  (default 10 s per run)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-10}
swift build -c release --product geoattrd >&2
work=$(mktemp -d)
trap 'kill $daemon 2>/dev/null; wait $daemon 2>/dev/null; rm -rf "$work"' EXIT
gcc -O2 -o "$work/uds-load" bench/uds-load.c
printf 'gpsd:\n  enabled: false\nstatic:\n  latitude: 47.3769\n  longitude: 8.5417\napi:\n  max_connections: 2048\nlog:\n  level: warning\n' >"$work/c.yaml"
.build/release/geoattrd --config "$work/c.yaml" --state-dir "$work" --state-file "$work/state" --socket "$work/api.sock" &
daemon=$!
for _ in $(seq 1 200); do [ -S "$work/api.sock" ] && break; sleep 0.05; done
sleep 0.5
for connections in 1 64 512; do
    "$work/uds-load" "$work/api.sock" /v1/attributes "$connections" "$seconds"
done
