#!/usr/bin/env bash
# The main job on its embedded default: geoattrd with the real world index, fed by gpsd
# (through gpsfake) replaying share/tracks/demo.nmea, a receiver with no fix for 4 s that then
# drives down the Champs-Elysees. The daemon takes a fix as soon as the receiver has one, again
# every 10 s (a short TTL for the demo), one forced by SIGUSR1, and stops DEMO_SECONDS (20, any
# whole number; 0 stops right after the forced refresh) after it started; then its cache file is
# printed. Exits 1 when no geocoded place arrives. The first run fetches the geodata and builds
# the world index (a few minutes), into GEODATA_CACHE (default cache/geodata).
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${DEMO_SECONDS:-20}
case $seconds in
    '' | *[!0-9]*) echo "demo: DEMO_SECONDS must be a whole number of seconds; got '$seconds'" >&2; exit 64 ;;
esac
seconds=$((10#$seconds))

bash scripts/install-deps.sh
if ! python3 -m venv --help >/dev/null 2>&1; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 python3-venv python3-pip >/dev/null
fi
swift build --product geoattrd >&2
swift build --product geoattrctl >&2
bin=$(swift build --show-bin-path)
source scripts/lib/world-index.sh
# Built when missing, and again when another builder or format made it (world_index_current).
ensure_world_index
started=$SECONDS

work=$(mktemp -d)
port=$(python3 -c 'import random, socket
for _ in range(200):
    port = random.randrange(20000, 32000)
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", port)); print(port); break
    except OSError: pass
    finally: s.close()')
# gpsfake in pipe mode makes gpsd read the log at once (looping over it); its own session, so
# that gpsfake and its gpsd can be stopped together.
TMPDIR="$work" setsid gpsfake -p -q -P "$port" -c 0.05 share/tracks/demo.nmea >"$work/gpsfake.out" 2>"$work/gpsfake.err" &
gpsfake_pid=$!
daemon_pid=
cleanup() {
    [ -n "$daemon_pid" ] && kill -TERM "$daemon_pid" 2>/dev/null && wait "$daemon_pid" 2>/dev/null || true
    kill -TERM -- "-$gpsfake_pid" 2>/dev/null || true
    sleep 0.3
    kill -KILL -- "-$gpsfake_pid" 2>/dev/null || true
    wait "$gpsfake_pid" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

for _ in $(seq 1 200); do
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
    kill -0 "$gpsfake_pid" 2>/dev/null || { cat "$work/gpsfake.err" >&2; exit 1; }
    sleep 0.05
done

printf 'schedule:\n  ttl_s: 10\n' >"$work/geoattrd.yaml"
echo "== geoattrd --gpsd 127.0.0.1:$port (gpsd replaying share/tracks/demo.nmea) for $seconds s" >&2
"$bin/geoattrd" --config "$work/geoattrd.yaml" --gpsd "127.0.0.1:$port" \
    --state-dir "$work" --state-file "$work/state" --socket "$work/geoattrd.sock" \
    --index "$world_index" &
daemon_pid=$!
ctl() { "$bin/geoattrctl" "$@" --socket "$work/geoattrd.sock"; }
generation() { { ctl get 2>/dev/null || true; } | sed -n 's/.*"generation":\([0-9]*\).*/\1/p'; }
# The first fix: the receiver has none for 4 s, then gpsd needs a report or two.
first=
for _ in $(seq 1 300); do
    first=$(generation)
    [ -n "$first" ] && break
    kill -0 "$daemon_pid" 2>/dev/null || { echo "demo: geoattrd exited" >&2; exit 1; }
    sleep 0.1
done
[ -n "$first" ] || { echo "demo: no fix from gpsd within 30 s" >&2; exit 1; }
echo "== geoattrctl get --format otel (over the daemon's socket)" >&2
ctl get --format otel
echo "== kill -USR1 (forced refresh)" >&2
kill -USR1 "$daemon_pid"
for _ in $(seq 1 100); do
    [ "$(generation)" != "$first" ] && break
    sleep 0.1
done
echo "== curl --unix-socket $work/geoattrd.sock http://geoattrd/v1/attributes" >&2
answer=$(curl -s --unix-socket "$work/geoattrd.sock" http://geoattrd/v1/attributes || ctl get || true)
echo "$answer"
rest=$((seconds - (SECONDS - started)))
[ "$rest" -gt 0 ] && sleep "$rest"
kill -TERM "$daemon_pid"
wait "$daemon_pid" || true
daemon_pid=
echo "== $work/cache.json (what the daemon serves after a restart)" >&2
cat "$work/cache.json"
echo
case $answer in
    *'"geo.country.iso_code":"'*) ;;
    *) echo "demo: the daemon served no geocoded place" >&2; exit 1 ;;
esac
