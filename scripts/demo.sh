#!/usr/bin/env bash
# The main job on its embedded default: geoattrd with the real world index, fed by gpsd
# (through gpsfake) replaying share/tracks/demo.nmea, a receiver with no fix for 4 s that then
# drives down the Champs-Elysees. The daemon takes a fix at once, again every 10 s (a short TTL
# for the demo), one forced by SIGUSR1, and stops after DEMO_SECONDS (20); then its cache file is
# printed. The first run fetches the geodata and builds the world index (a few minutes).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
if ! python3 -m venv --help >/dev/null 2>&1; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv python3-pip >/dev/null
fi
if [ ! -f cache/geodata/world.gidx ]; then
    bash scripts/fetch-geodata.sh >&2
    bash scripts/build-world-index.sh >&2
fi
swift build --product geoattrd >&2
swift build --product geoattrctl >&2
bin=$(swift build --show-bin-path)

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
echo "== geoattrd --gpsd 127.0.0.1:$port (gpsd replaying share/tracks/demo.nmea) for ${DEMO_SECONDS:-20} s" >&2
"$bin/geoattrd" --config "$work/geoattrd.yaml" --gpsd "127.0.0.1:$port" \
    --state-dir "$work" --state-file "$work/state" --socket "$work/geoattrd.sock" \
    --index cache/geodata/world.gidx &
daemon_pid=$!
sleep 6
echo "== geoattrctl get --format otel (over the daemon's socket)" >&2
"$bin/geoattrctl" get --socket "$work/geoattrd.sock" --format otel || true
echo "== kill -USR1 (forced refresh)" >&2
kill -USR1 "$daemon_pid"
sleep 2
echo "== curl --unix-socket $work/geoattrd.sock http://geoattrd/v1/attributes" >&2
curl -s --unix-socket "$work/geoattrd.sock" http://geoattrd/v1/attributes || "$bin/geoattrctl" get --socket "$work/geoattrd.sock"
echo
sleep $(( ${DEMO_SECONDS:-20} - 8 ))
kill -TERM "$daemon_pid"
wait "$daemon_pid" || true
daemon_pid=
echo "== $work/cache.json (what the daemon serves after a restart)" >&2
cat "$work/cache.json"
echo
