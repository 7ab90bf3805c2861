#!/usr/bin/env bash
# The socket API against its peers, in one run: GET /v1/attributes over the Unix socket with
# keep-alive connections (64 by default), to a release build of this tree, to Go's net/http
# (go-peer/, Debian's golang-go) serving the body geoattrd gave, and, when BASELINE names one,
# to another geoattrd binary (an earlier build). The servers take turns in rounds of SECONDS
# with the same load generator (uds-load.c), so that the machine's drift falls on all of them
# alike; the summary gives each server's median requests/s and p99, and the ratios.
# Usage: Benchmarks/daemon/bench-api-peers.sh [SECONDS] [ROUNDS]   (default 5 s, 5 rounds)
#   BASELINE=PATH     another geoattrd binary to measure beside this tree's
#   CONNECTIONS=N     keep-alive connections (default 64)
#   GEOATTRD=PATH     this tree's binary (default: swift build -c release, .build/release/geoattrd)
#   PIN=1             every server on CPU 0 and the load generator on CPU 1 (taskset), so that
#                     neither takes the other's core
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-5}
rounds=${2:-5}
connections=${CONNECTIONS:-64}
server_cpu=()
load_cpu=()
if [ "${PIN:-}" = 1 ]; then
    server_cpu=(taskset -c 0)
    load_cpu=(taskset -c 1)
fi
if [ -z "${GEOATTRD:-}" ]; then
    swift build -c release --product geoattrd >&2
    GEOATTRD=.build/release/geoattrd
fi
command -v go >/dev/null || { echo "bench-api-peers: needs Go (apt-get install golang-go)" >&2; exit 69; }
work=$(mktemp -d)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
gcc -O2 -o "$work/uds-load" Benchmarks/daemon/uds-load.c
(cd Benchmarks/daemon/go-peer && GOCACHE="$work/gocache" GO111MODULE=off go build -o "$work/go-peer" main.go)
printf 'gpsd:\n  enabled: false\nstatic:\n  latitude: 47.3769\n  longitude: 8.5417\napi:\n  max_connections: 2048\nlog:\n  level: warning\n' >"$work/c.yaml"

wait_for_socket() {
    for _ in $(seq 1 200); do [ -S "$1" ] && return 0; sleep 0.05; done
    echo "bench-api-peers: $1 did not appear" >&2
    return 1
}

start_geoattrd() { # NAME BINARY
    mkdir -p "$work/$1"
    "${server_cpu[@]}" "$2" --config "$work/c.yaml" --state-dir "$work/$1" --state-file "$work/$1/state" --socket "$work/$1.sock" &
    pids+=($!)
    wait_for_socket "$work/$1.sock"
}

servers=(geoattrd)
start_geoattrd geoattrd "$GEOATTRD"
if [ -n "${BASELINE:-}" ]; then
    servers+=(baseline)
    start_geoattrd baseline "$BASELINE"
fi
sleep 0.5
curl -s --unix-socket "$work/geoattrd.sock" http://geoattrd/v1/attributes >"$work/body"
"${server_cpu[@]}" "$work/go-peer" "$work/go.sock" "$work/body" &
pids+=($!)
wait_for_socket "$work/go.sock"
servers+=(go)
echo "body: $(wc -c <"$work/body") bytes; $connections connections, $rounds rounds of $seconds s"

for round in $(seq 1 "$rounds"); do
    for server in "${servers[@]}"; do
        line=$("${load_cpu[@]}" "$work/uds-load" "$work/$server.sock" /v1/attributes "$connections" "$seconds")
        echo "round $round  $(printf '%-9s' "$server") $line"
        echo "$server $line" >>"$work/results"
    done
done

awk -v servers="${servers[*]}" '
    { name = $1; rps[name, ++n[name]] = $6; p99[name, n[name]] = $12; errors[name] += $18 }
    function median(array, name, count,    i, j, t, v) {
        for (i = 1; i <= count; i++) v[i] = array[name, i]
        for (i = 1; i <= count; i++) for (j = i + 1; j <= count; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
        return count % 2 ? v[(count + 1) / 2] : (v[count / 2] + v[count / 2 + 1]) / 2
    }
    END {
        split(servers, list, " ")
        for (k in list) {
            s = list[k]; m[s] = median(rps, s, n[s]); q[s] = median(p99, s, n[s])
            printf "%-9s median %.0f req/s  p99 %.3f ms  errors %d\n", s, m[s], q[s], errors[s]
        }
        if ("baseline" in m) {
            printf "geoattrd / baseline: %.3f (round by round:", m["geoattrd"] / m["baseline"]
            for (i = 1; i <= n["geoattrd"]; i++) printf " %.2f", rps["geoattrd", i] / rps["baseline", i]
            print ")"
        }
        printf "geoattrd / go: %.3f (round by round:", m["geoattrd"] / m["go"]
        for (i = 1; i <= n["geoattrd"]; i++) printf " %.2f", rps["geoattrd", i] / rps["go", i]
        print ")"
    }' "$work/results"
