#!/usr/bin/env bash
# The main job on its embedded default: gpsd (through gpsfake) replays share/tracks/demo.nmea,
# a receiver with no fix for 4 s that then drives down the Champs-Elysees, and geoattrctl takes
# one fix from it and prints it as JSON. (Once the daemon lands it will be the daemon here.)
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
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
# gpsfake in pipe mode makes gpsd read the log at once and exits by itself at its end; its own
# session, so that gpsfake and its gpsd can be stopped together.
TMPDIR="$work" setsid gpsfake -1 -p -q -P "$port" -c 0.05 share/tracks/demo.nmea >"$work/gpsfake.out" 2>"$work/gpsfake.err" &
gpsfake_pid=$!
cleanup() {
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

echo "geoattrctl fix --gpsd 127.0.0.1:$port (gpsd replaying share/tracks/demo.nmea):" >&2
"$bin/geoattrctl" fix --gpsd "127.0.0.1:$port" --timeout 30
