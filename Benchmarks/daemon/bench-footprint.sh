#!/usr/bin/env bash
# The device footprint, measured on the packages: the stripped binaries' sizes, the .deb sizes,
# the installed sizes, and the memory of the packaged daemon at work. The packages are extracted
# (dpkg-deb -x) into a temporary root, nothing is installed; the daemon runs from there as an
# unprivileged user (nobody, when run as root) with the packaged world index and configuration,
# fed by gpsd (gpsfake) replaying share/tracks/demo.nmea. After its first fix and 20 queries
# through the packaged geoattrctl: RSS, Pss and Private_Dirty from /proc/PID/smaps_rollup, and
# the mappings (file and permissions) holding the most private dirty memory and the most Pss; once
# with the files in the page cache and once (as root) after dropping it, as on a device after boot.
# Every figure against its target and stretch target, PASS or MISS. MB = 10^6 bytes throughout.
#   Benchmarks/daemon/bench-footprint.sh [--check] [OUTDIR]
#     OUTDIR   the packages are taken from there if it has them, else built there by
#              scripts/make-deb.sh (default: a temporary directory)
#     --check  exit 1 when a target (not a stretch target) is missed
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/lib/footprint-scenario.sh
check=0
if [ "${1:-}" = --check ]; then check=1; shift; fi
out=${1:-}
bash scripts/install-deps.sh >&2
arch=$(dpkg --print-architecture)
work=$(mktemp -d)
chmod 0755 "$work"
daemon_pid=''
cleanup() {
    [ -z "$daemon_pid" ] || { kill -TERM "$daemon_pid" 2>/dev/null && wait "$daemon_pid" 2>/dev/null; } || true
    gpsd_replay_stop
    rm -rf "$work"
}
trap cleanup EXIT

deb=$( [ -z "$out" ] || ls -t "$out"/geoattrd_*_"$arch".deb 2>/dev/null | sed -n 1p || true)
if [ -z "$deb" ]; then
    out=${out:-$work/dist}
    bash scripts/make-deb.sh "$out" >/dev/null
    deb=$(ls -t "$out"/geoattrd_*_"$arch".deb | sed -n 1p)
fi
# The index package beside it, the newest: its version is its own (FORMAT.DATA), not geoattrd's.
geodata=$(ls -t "$(dirname "$deb")"/geoattrd-geodata_*_all.deb 2>/dev/null | sed -n 1p || true)
root=$work/root
dpkg-deb -x "$deb" "$root"
[ -z "$geodata" ] || dpkg-deb -x "$geodata" "$root"
# Written back first: the pages of a file just written are dirty in the page cache, and smaps
# counts them as the mapping process's private dirty memory (dpkg syncs what it installs, too).
sync

rows=() misses=0
mb() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1e6 }'; }
# under BYTES LIMIT-MB: PASS or MISS ("-" without a limit)
under() { [ "$2" = - ] && echo - || awk -v b="$1" -v t="$2" 'BEGIN { print (b <= t * 1e6) ? "PASS" : "MISS" }'; }
# row FIGURE BYTES TARGET-MB STRETCH-MB
row() {
    local verdict
    verdict=$(under "$2" "$3")
    [ "$verdict" != MISS ] || misses=$((misses + 1))
    rows+=("$(printf '%-28s %11s %8s %8s %8s  %-5s %s' "$1" "$2" "$(mb "$2")" "$3" "$4" "$verdict" "$(under "$2" "$4")")")
}
for binary in geoattrd geoattrctl; do
    stretch=-; [ $binary = geoattrctl ] || stretch=16
    row "$binary stripped" "$(stat -c %s "$root/usr/bin/$binary")" 20 "$stretch"
done
installed=0
for package in "$deb" $geodata; do
    kib=$(dpkg-deb -f "$package" Installed-Size)
    installed=$((installed + kib * 1024))
    echo "package $(basename "$package"): $(stat -c %s "$package") bytes ($(mb "$(stat -c %s "$package")") MB) .deb, Installed-Size $kib KiB ($(mb $((kib * 1024))) MB)"
done
[ -n "$geodata" ] || echo "NOTE  no geoattrd-geodata package (no world index built): sizes and memory without the index"
row "installed, both packages" "$installed" 80 65

# The daemon at work, twice: with the packaged files in the page cache (just unpacked: the kernel
# maps the cached pages around each page the daemon touches, so most of its code shows as
# resident), and, as root, after the page cache was dropped, as on a device after boot (only
# what the daemon touches, and what readahead brings with it, is resident).
gpsd_replay_start "$work"
scenario_user "$work"
scenario_ctl=$root/usr/bin/geoattrctl
socket=$work/state/geoattrd.sock
# measure LABEL: starts the daemon, waits for its first fix, makes 20 queries, prints its memory
# and adds the rows; stops it.
measure() {
    local label=$1
    rm -f "$work/state/cache.json"
    # setpriv executes the daemon in its own process: $! is the daemon's pid.
    "${scenario_as_user[@]}" "$root/usr/bin/geoattrd" --config "$root/etc/geoattrd/geoattrd.yaml" --gpsd "127.0.0.1:$gpsd_replay_port" \
        --state-dir "$work/state" --state-file "$work/state/state" --socket "$socket" \
        --index "$root/usr/share/geoattrd/world.gidx" >"$work/daemon.log" 2>&1 &
    daemon_pid=$!
    scenario_first_fix bench-footprint "$daemon_pid" "$socket" "$work/daemon.log" 60
    echo "== $label: first fix served after $scenario_fix_seconds s: $(scenario_get "$socket" --format otel | tr '\n' ' ' | cut -c 1-160)"
    scenario_queries "$socket"
    sleep 1
    kb() { awk -v k="$1" '$1 == k ":" { print $2 }' "/proc/$daemon_pid/smaps_rollup"; }
    echo "after 20 queries, smaps_rollup: Rss $(kb Rss) kB, Pss $(kb Pss) kB, Private_Dirty $(kb Private_Dirty) kB, Private_Clean $(kb Private_Clean) kB, Shared_Clean $(kb Shared_Clean) kB"
    row "daemon RSS, $label" $(($(kb Rss) * 1024)) - -
    row "daemon Pss, $label" $(($(kb Pss) * 1024)) 12 8
    row "daemon Private_Dirty, $label" $(($(kb Private_Dirty) * 1024)) 6 4
    # Per mapping (file and permissions), kB: Private_Dirty, Pss.
    awk '/^[0-9a-f]+-[0-9a-f]+ / { name = ($6 == "" ? "[anonymous]" : $6) " " $2; next }
        $1 == "Private_Dirty:" { dirty[name] += $2 } $1 == "Pss:" { pss[name] += $2 }
        END { for (n in pss) printf "%8d %8d  %s\n", dirty[n], pss[n], n }' "/proc/$daemon_pid/smaps" | sed "s|$root||" >"$work/mappings"
    echo "by mapping, top 5 by private dirty (kB: Private_Dirty, Pss):"
    sort -k1,1rn "$work/mappings" | sed -n 1,5p
    echo "by mapping, top 5 by Pss (kB: Private_Dirty, Pss):"
    sort -k2,2rn "$work/mappings" | sed -n 1,5p
    kill -TERM "$daemon_pid" && wait "$daemon_pid" || true
    daemon_pid=''
}
measure "files cached"
if [ "$(id -u)" -eq 0 ]; then
    sync
    echo 3 >/proc/sys/vm/drop_caches
    measure "after boot"
else
    echo "NOTE  not root: no measurement with the page cache dropped (as after boot)"
fi
printf '%-28s %11s %8s %8s %8s  %-5s %s\n' figure bytes MB target stretch met "met (stretch)"
printf '%s\n' "${rows[@]}"
if [ "$misses" -gt 0 ]; then
    echo "bench-footprint: $misses target(s) missed"
    [ "$check" -eq 0 ] || exit 1
fi
