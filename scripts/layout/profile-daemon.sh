#!/usr/bin/env bash
# The daemon's code layout: which functions it runs, in the order it first runs them, as a
# section ordering for the linker (gold --section-ordering-file), so that the package links them
# next to each other.
#
#   scripts/layout/profile-daemon.sh GEOATTRD MAP ORDER
#
# GEOATTRD is a position-dependent, unstripped geoattrd linked with -function-sections, and MAP
# the linker's map of that link (-Map); its geoattrctl sibling makes the queries. It runs what
# Benchmarks/daemon/bench-footprint.sh measures: the daemon with config/geoattrd.yaml and the
# world index ($GEODATA_CACHE/world.gidx, default cache/geodata, when built), fed by gpsfake replaying
# share/tracks/demo.nmea, until its first fix is served, then 20 queries. It runs under
# scripts/layout/first-calls.c (ptrace: a one-shot breakpoint on every function entry) as nobody
# when run as root. The entries are the function symbols and the start of every code section in
# MAP: the compiler gives private functions (closure context destructors, partial-apply
# forwarders) a section of their own but no symbol, and they run as often as any.
# ORDER gets, for each entry called, the name of its section in MAP and `.text.SYMBOL` for each of
# its symbols, once each. A name several small sections share (`.text..Lobjectdestroy`) places
# them all; the names of whole-file sections (`.text`, `.text.unlikely.`, C and C++ runtime code
# built without a section per function) are left out, and those keep their place.
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/lib/footprint-scenario.sh
source scripts/lib/world-index.sh
daemon=$1 map=$2 order=$3
scenario_ctl=$(dirname "$daemon")/geoattrctl
[ -x "$scenario_ctl" ] || { echo "profile-daemon: no geoattrctl beside $daemon" >&2; exit 1; }
work=$(mktemp -d)
chmod 0755 "$work"
tracer_pid=''
cleanup() {
    [ -z "$tracer_pid" ] || { kill -TERM "$tracer_pid" 2>/dev/null && wait "$tracer_pid" 2>/dev/null; } || true
    gpsd_replay_stop
    rm -rf "$work"
}
trap cleanup EXIT
# The Swift toolchain brings clang; a machine without it may still have cc.
compiler=$(command -v clang || command -v cc) || { echo "profile-daemon: no C compiler (clang or cc)" >&2; exit 1; }
"$compiler" -O2 -o "$work/first-calls" scripts/layout/first-calls.c
# Function symbols (local and global, weak included); one address may carry several names.
nm --defined-only "$daemon" | awk '$2 ~ /^[tTwW]$/ { print $1, $3 }' | LC_ALL=C sort >"$work/names"
# Code sections placed by the link: gold writes "NAME ADDRESS SIZE FILE", the address and what
# follows on a line of their own after a long name. Discarded sections are listed at address 0.
awk '
    pending != "" { if ($1 ~ /^0x/) section(pending, $1, $2); pending = ""; next }
    /^ \.text[^ ]*$/ { pending = $1; next }
    /^ \.text/ && $2 ~ /^0x/ { section($1, $2, $3) }
    function section(name, address, size) {
        if (address !~ /^0x0+$/ && size !~ /^0x0+$/) print substr(address, 3), name
    }' "$map" | LC_ALL=C sort >"$work/sections"
[ -s "$work/sections" ] || { echo "profile-daemon: no code sections in $map" >&2; exit 1; }
LC_ALL=C sort -m "$work/names" "$work/sections" | awk '{ print $1 }' | uniq >"$work/entries"

gpsd_replay_start "$work"
scenario_user "$work"
cp "$daemon" "$work/geoattrd"
index=()
[ ! -f "$world_index" ] || index=(--index "$world_index")
socket=$work/state/geoattrd.sock
"$work/first-calls" "$work/entries" "$work/called" "$scenario_uid" "$scenario_gid" -- "$work/geoattrd" --config "$PWD/config/geoattrd.yaml" \
    --gpsd "127.0.0.1:$gpsd_replay_port" --state-dir "$work/state" --state-file "$work/state/state" --socket "$socket" \
    "${index[@]}" >"$work/daemon.log" 2>&1 &
tracer_pid=$!
scenario_first_fix profile-daemon "$tracer_pid" "$socket" "$work/daemon.log" 120
scenario_queries "$socket"
pkill -TERM -P "$tracer_pid" -x geoattrd
wait "$tracer_pid" || { cat "$work/daemon.log" >&2; echo "profile-daemon: the traced daemon failed" >&2; exit 1; }
tracer_pid=''
grep 'first-calls:' "$work/daemon.log" >&2
# The section and every symbol of each called entry, in the order of the first calls.
awk '
    FILENAME == ARGV[1] { names[$1] = names[$1] " .text." $2; next }
    FILENAME == ARGV[2] { if ($2 !~ /^\.text(\.(unlikely|startup|hot|exit))?\.?$/) names[$1] = " " $2 names[$1]; next }
    {
        n = split(names[$1], list, " ")
        for (i = 1; i <= n; i++) if (!(list[i] in seen)) { seen[list[i]] = 1; print list[i] }
    }' "$work/names" "$work/sections" "$work/called" >"$order"
echo "profile-daemon: $(wc -l <"$order") sections in $order" >&2
