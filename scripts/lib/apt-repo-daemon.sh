#!/usr/bin/env bash
# Run inside a Debian tree by scripts/debian-install-test.sh, as PID 1 of a PID namespace of its
# own (what it starts ends with it): the installed geoattrd, run by hand as scripts/demo.sh runs
# it, against the tree's gpsd through gpsfake replaying /root/daemon/demo.nmea. Prints what the
# socket serves; exits 0 once it serves FR-IDF, 1 when it has not within 45 s.
#   bash /root/daemon/run.sh PORT
set -euo pipefail
port=$1
dir=/root/daemon
cd "$dir"
# gpsfake in pipe mode makes gpsd read the log at once (looping over it).
TMPDIR=$dir gpsfake -p -q -P "$port" -c 0.05 demo.nmea >gpsfake.out 2>gpsfake.err &
gpsfake_pid=$!
for _ in $(seq 1 200); do
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
    kill -0 "$gpsfake_pid" 2>/dev/null || { cat gpsfake.err; exit 1; }
    sleep 0.05
done
printf 'schedule:\n  ttl_s: 10\n' >geoattrd.yaml
geoattrd --config geoattrd.yaml --gpsd "127.0.0.1:$port" --state-dir "$dir" --state-file "$dir/state" \
    --socket "$dir/geoattrd.sock" --index /usr/share/geoattrd/world.gidx >geoattrd.log 2>&1 &
daemon_pid=$!
answer=
for _ in $(seq 1 450); do
    answer=$(geoattrctl get --socket "$dir/geoattrd.sock" 2>/dev/null || true)
    case $answer in *'"geo.region.iso_code":"FR-IDF"'*) printf '%s\n' "$answer"; exit 0 ;; esac
    kill -0 "$daemon_pid" 2>/dev/null || break
    sleep 0.1
done
echo "no FR-IDF from geoattrctl get --socket $dir/geoattrd.sock; last answer: ${answer:-none}"
tail -n 20 geoattrd.log gpsfake.err
exit 1
