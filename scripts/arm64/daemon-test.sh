#!/usr/bin/env bash
# The arm64 geoattrd works as a daemon under qemu-user, beside the native build of the same tree,
# against a real gpsd (gpsfake replaying share/tracks/demo.nmea on a free loopback port):
#   1. gpsd serves 3D fixes, listening on loopback only;
#   2. each build, in a temporary directory of its own with the same configuration, is timed from
#      process start to the first served fix (the host's geoattrctl get returns a country), the
#      median of DAEMON_TEST_TRIALS starts (default 3), each with an empty cache; then arm64/native;
#   3. on the arm64 daemon: curl on the API serves what geoattrctl get does; SIGUSR1 forces a fix;
#      SIGHUP applies an edited configuration and refuses one with a typo, keeping the last good
#      one; the state file pauses it (no scheduled fix, however overdue) and resumes it (a fix at
#      once); SIGTERM stops it with status 0 and removes its socket; started again with gpsd
#      stopped, it serves the result in its disk cache.
# The host's geoattrctl and curl are the clients, as root: the default access level, no group
# rules (qemu-user 7.2 answers SO_PEERGROUPS with a 4-byte buffer). One PASS or FAIL line per
# check and a summary; exit 1 on any failure.
#   scripts/arm64/daemon-test.sh ARM64_BIN_DIR NATIVE_BIN_DIR INDEX
# Each BIN_DIR holds geoattrd and geoattrctl. The arm64 ones run as qemu-aarch64-static -L SYSROOT,
# SYSROOT being GEOATTRD_ARM64_SYSROOT, by default the Debian 12 one ($arm64_sysroot,
# scripts/arm64/common.sh); test.sh runs this again with Debian 13's (sysroot-trixie.sh).
# Emulation is not the device: the timings are for the record, not a figure of the product.
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/arm64/common.sh
[ $# -eq 3 ] || { echo "usage: daemon-test.sh ARM64_BIN_DIR NATIVE_BIN_DIR INDEX" >&2; exit 64; }
arm_dir=$(realpath "$1") native_dir=$(realpath "$2") index=$(realpath "$3")
track=$PWD/share/tracks/demo.nmea
trials=${DAEMON_TEST_TRIALS:-3}
case $trials in '' | *[!0-9]* | 0) echo "daemon-test: DAEMON_TEST_TRIALS must be a whole number above 0" >&2; exit 64 ;; esac
for needed in "$arm_dir/geoattrd" "$native_dir/geoattrd" "$native_dir/geoattrctl"; do
    [ -x "$needed" ] || { echo "daemon-test: no executable $needed" >&2; exit 64; }
done
[ -f "$index" ] || { echo "daemon-test: no index $index" >&2; exit 64; }
sysroot=${GEOATTRD_ARM64_SYSROOT:-$arm64_sysroot}
[ -e "$sysroot/lib/ld-linux-aarch64.so.1" ] || { echo "daemon-test: $sysroot has no lib/ld-linux-aarch64.so.1" >&2; exit 64; }
# geoattrd takes GEOATTRD_* variables as configuration and refuses a key it does not know, and
# geoattrctl reads some: the test's own settings (GEOATTRD_ARM64_*) stay out of their environment.
while read -r variable; do unset "$variable"; done < <(compgen -e | grep '^GEOATTRD_' || true)
for tool in qemu-aarch64-static gpsfake gpspipe curl ss setsid; do
    command -v "$tool" >/dev/null || { echo "daemon-test: $tool is missing (qemu-user-static, gpsd-clients, curl, iproute2)" >&2; exit 1; }
done

work=$(mktemp -d -t geoattrd-daemon-test.XXXXXX)
passes=0 failures=0 gpsfake_pid='' gpsd_port='' daemon_pid='' daemon_started=0 sock='' dir=''
script_started=${EPOCHREALTIME/[.,]/}

pass() { printf 'PASS  %s\n' "$*"; passes=$((passes + 1)); }
fail() { printf 'FAIL  %s\n' "$*"; failures=$((failures + 1)); }
# A failure after which the later checks would only repeat it.
die() {
    fail "$*"
    [ -z "$dir" ] || { echo "      the daemon's last log lines ($dir/log):"; tail -n 15 "$dir/log" | sed 's/^/      /'; }
    exit 1
}
now_us() { echo "${EPOCHREALTIME/[.,]/}"; }
# seconds FROM_US [TO_US]: the time between, in seconds with two decimals.
seconds() { awk -v a="$1" -v b="${2:-$(now_us)}" 'BEGIN { printf "%.2f", (b - a) / 1e6 }'; }
# field KEY: the value of KEY in the JSON on stdin (keys the answers hold once: the last wins).
field() { sed -n "s/.*\"$1\":\(\"[^\"]*\"\|[-0-9.eE][-0-9.eE]*\|true\|false\|null\).*/\1/p" | tr -d '"'; }
ctl() {
    local sub=$1
    shift
    "$native_dir/geoattrctl" "$sub" --socket "$sock" "$@"
}
status() { ctl status 2>/dev/null || true; }
prom_value() { sed -n "s/^$1 //p" "$dir/geoattrd.prom" 2>/dev/null || true; }

# poll TIMEOUT_S COMMAND...: COMMAND every 50 ms until it succeeds; 1 when TIMEOUT_S pass first,
# 2 as soon as the daemon under test has exited.
poll() {
    local deadline=$(($(now_us) + $1 * 1000000))
    shift
    until "$@"; do
        if [ -n "$daemon_pid" ] && ! kill -0 "$daemon_pid" 2>/dev/null; then return 2; fi
        [ "$(now_us)" -lt "$deadline" ] || return 1
        sleep 0.05
    done
}

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# A watcher sees a 3D TPV: gpsfake can lose its start-up race with its gpsd and leave it listening
# with no device, which a port that accepts would not show.
gpsd_serves_fix() {
    { timeout 6 gpspipe -w "127.0.0.1:$gpsd_port" 2>/dev/null || true; } | grep -q -m 1 '"class":"TPV".*"mode":3'
}

stop_gpsd() {
    [ -n "$gpsfake_pid" ] || return 0
    kill -TERM -- "-$gpsfake_pid" 2>/dev/null || true
    for _ in $(seq 40); do
        kill -0 -- "-$gpsfake_pid" 2>/dev/null || break
        sleep 0.05
    done
    kill -KILL -- "-$gpsfake_pid" 2>/dev/null || true
    wait "$gpsfake_pid" 2>/dev/null || true
    gpsfake_pid=''
}

start_gpsd() {
    local started listeners
    mkdir -p "$work/gpsd"
    started=$(now_us)
    for _ in 1 2 3; do
        gpsd_port=$(free_port)
        # Pipe mode, looping over the track; its own session, so that gpsfake and its gpsd stop
        # together; TMPDIR for gpsd's control socket.
        TMPDIR="$work/gpsd" setsid gpsfake -p -q -P "$gpsd_port" -c 0.05 "$track" \
            >"$work/gpsd/out" 2>"$work/gpsd/err" &
        gpsfake_pid=$!
        if poll 20 gpsd_serves_fix; then
            # Without -G gpsd binds the loopback addresses alone; a change there would expose
            # the position to the network.
            listeners=$(ss -Hltn "sport = :$gpsd_port" | awk '{ print $4 }' | sort -u | paste -sd ' ')
            if [ -n "$listeners" ] && ! grep -qvE '^(127\.0\.0\.1|\[::1\]):' <<<"${listeners// /$'\n'}"; then
                pass "gpsd (gpsfake, share/tracks/demo.nmea) serves 3D fixes on 127.0.0.1:$gpsd_port after $(seconds "$started") s, listening on loopback only ($listeners)"
            else
                fail "gpsd on port $gpsd_port listens on ${listeners:-nothing}, not on loopback alone"
            fi
            return 0
        fi
        stop_gpsd
    done
    die "gpsd (gpsfake) served no 3D fix in 3 attempts: $(tail -n 3 "$work/gpsd/err" | paste -sd ' ')"
}

# write_config DIR LEVEL TTL [LEVEL_KEY]: the same shape for both builds; LEVEL_KEY lets a typo in.
write_config() {
    local d=$1 level=$2 ttl=$3 key=${4:-level}
    cat >"$d/geoattrd.yaml.new" <<YAML
gpsd:
  endpoint: "127.0.0.1:$gpsd_port"
schedule:
  ttl_s: $ttl
index:
  path: $index
socket:
  path: $d/geoattrd.sock
state:
  file: $d/state
  dir: $d/cache
outputs:
  prometheus_file: $d/geoattrd.prom
  $key: $level
YAML
    # geoattrd must never read a half-written file.
    mv "$d/geoattrd.yaml.new" "$d/geoattrd.yaml"
}

# start_daemon BUILD DIR: geoattrd in the foreground, its log in DIR/log.
start_daemon() {
    local build=$1 command
    dir=$2 sock=$2/geoattrd.sock
    command=("$native_dir/geoattrd")
    [ "$build" = native ] || command=(qemu-aarch64-static -L "$sysroot" "$arm_dir/geoattrd")
    daemon_started=$(now_us)
    "${command[@]}" --config "$dir/geoattrd.yaml" >>"$dir/log" 2>&1 &
    daemon_pid=$!
}

# stop_daemon: SIGTERM, then the daemon's exit status in stop_status and the time in stop_seconds.
stop_daemon() {
    local pid=$daemon_pid started rc=0
    started=$(now_us)
    kill -TERM "$pid" 2>/dev/null || true
    # Bounded: a daemon that ignores SIGTERM must not hang the run.
    poll 15 false || rc=$?
    [ "$rc" -eq 2 ] || kill -KILL "$pid" 2>/dev/null || true
    stop_seconds=$(seconds "$started")
    daemon_pid=''
    stop_status=0
    wait "$pid" 2>/dev/null || stop_status=$?
}

served_country() {
    ctl get 2>/dev/null | grep -q '"geo.country.iso_code":"'
}

# first_fix BUILD TRIAL: starts BUILD with an empty cache; sets first_fix_s and startup_s, the
# part of it before the daemon's own time to fix (which is gpsd's and the track's: where the replay
# stands when the daemon connects).
first_fix() {
    local build=$1 trial=$2 rc=0
    mkdir -p "$work/$build-$trial/cache"
    write_config "$work/$build-$trial" country 3600
    start_daemon "$build" "$work/$build-$trial"
    poll 60 served_country || rc=$?
    first_fix_s=$(seconds "$daemon_started")
    if [ "$rc" -eq 2 ]; then
        rc=0
        wait "$daemon_pid" || rc=$?
        daemon_pid=''
        die "$build geoattrd exited with status $rc before it served a fix"
    fi
    [ "$rc" -eq 0 ] || die "$build geoattrd served no fix within 60 s of its start"
    fix_s=$(curl -s --unix-socket "$sock" http://geoattrd/metrics | sed -n 's/^geoattrd_time_to_fix_seconds_sum //p')
    startup_s=$(awk -v t="$first_fix_s" -v s="${fix_s:-0}" 'BEGIN { printf "%.2f", t - s }')
}

ratio() { awk -v a="$1" -v n="$2" 'BEGIN { if (n > 0) printf "%.1fx (%s s / %s s)", a / n, a, n; else printf "n/a (%s s / %s s)", a, n }'; }
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

time_first_fixes() {
    local build trial all startups
    declare -gA median_first median_startup
    for build in native arm64; do
        all='' startups=''
        for trial in $(seq "$trials"); do
            first_fix "$build" "$trial"
            all+="$first_fix_s"$'\n' startups+="$startup_s"$'\n'
            # The arm64 daemon of the last trial goes on to the checks.
            [ "$build" = arm64 ] && [ "$trial" -eq "$trials" ] && continue
            stop_daemon
            [ "$stop_status" -eq 0 ] || fail "$build geoattrd (trial $trial) exited $stop_status on SIGTERM"
        done
        median_first[$build]=$(median <<<"${all%$'\n'}")
        median_startup[$build]=$(median <<<"${startups%$'\n'}")
        pass "$build: first served fix $(paste -sd ' ' <<<"${all%$'\n'}") s after process start, median ${median_first[$build]} s over $trials starts (of which before the daemon's own time to fix: median ${median_startup[$build]} s)"
    done
    pass "for the record, arm64 under qemu-user / native: first served fix $(ratio "${median_first[arm64]}" "${median_first[native]}"); the part before the daemon's own time to fix ${median_startup[arm64]} s against ${median_startup[native]} s, polled every 50 ms (load average $(cut -d' ' -f1-3 /proc/loadavg)): emulation is not the device"
}

check_curl_matches_get() {
    local by_ctl by_curl place
    by_ctl=$(ctl get) by_curl=$(curl -sf --unix-socket "$sock" http://geoattrd/v1/attributes) || true
    place=$(sed -n 's/.*"attributes":\({[^}]*}\).*/\1/p' <<<"$by_ctl")
    if [ -n "$place" ] && [ "$place" = "$(sed -n 's/.*"attributes":\({[^}]*}\).*/\1/p' <<<"$by_curl")" ] &&
        [ "$(field generation <<<"$by_ctl")" = "$(field generation <<<"$by_curl")" ]; then
        pass "curl --unix-socket GET /v1/attributes = geoattrctl get: $(field geo.country.iso_code <<<"$by_curl") $(field geo.region.iso_code <<<"$by_curl") $(field geo.locality.name <<<"$by_curl"), generation $(field generation <<<"$by_curl")"
    else
        fail "curl and geoattrctl get differ: curl ${by_curl:-nothing}; geoattrctl ${by_ctl:-nothing}"
    fi
}

generation_is_not() { [ "$(status | field generation)" != "$1" ] && [ "$(status | field fix_in_flight)" = false ]; }

check_sigusr1() {
    local before accepted started after
    before=$(status | field generation)
    accepted=$(status | field refreshes_accepted)
    started=$(now_us)
    kill -USR1 "$daemon_pid"
    if poll 30 generation_is_not "$before"; then
        after=$(status)
        if [ "$(field trigger <<<"$after")" = refresh ] && [ "$(field refreshes_accepted <<<"$after")" -eq $((accepted + 1)) ]; then
            pass "SIGUSR1 (to the qemu process) forced a fix: generation $before -> $(field generation <<<"$after") after $(seconds "$started") s, last_attempt.trigger refresh, refreshes_accepted $accepted -> $(field refreshes_accepted <<<"$after"), metrics $(curl -s --unix-socket "$sock" http://geoattrd/metrics | grep '^geoattrd_refresh_requests_total{decision="accepted"}')"
            return
        fi
        fail "SIGUSR1: a new result, but not a forced one: $after"
    else
        fail "SIGUSR1: no new fix within 30 s (generation still $before): $(status)"
    fi
}

# The textfile carries the locality from outputs.level locality on, never at country.
prom_has_locality() { grep -q 'geo_locality_name=' "$dir/geoattrd.prom" 2>/dev/null; }
prom_updated_is_not() { [ "$(prom_value geoattrd_location_updated_timestamp_seconds)" != "$1" ]; }
reload() { "$native_dir/geoattrctl" reload --pid "$daemon_pid" --state-dir "$dir/cache" --timeout 30 2>&1; }

check_sighup() {
    local answer rc=0 started updated
    prom_has_locality && fail "SIGHUP: the textfile carries the locality before the reload (outputs.level country)"
    # outputs.level country -> locality, rewritten at once; ttl_s 3600 -> 2, for the pause below.
    write_config "$dir" locality 2
    started=$(now_us)
    answer=$(reload) || rc=$?
    if [ "$rc" -eq 0 ] && poll 10 prom_has_locality; then
        pass "SIGHUP (geoattrctl reload --pid) applied outputs.level locality after $(seconds "$started") s: the textfile has $(grep -o 'geo_locality_name="[^"]*"' "$dir/geoattrd.prom")"
    else
        fail "SIGHUP: reload exit $rc (${answer:-no message}); textfile: $(grep '^geoattrd_location_info' "$dir/geoattrd.prom" 2>/dev/null || echo none)"
    fi
    # The typo leaves outputs.level out: applied, the file would fall back to country.
    write_config "$dir" region 2 levle
    rc=0
    answer=$(reload) || rc=$?
    updated=$(prom_value geoattrd_location_updated_timestamp_seconds)
    if [ "$rc" -ne 78 ]; then
        fail "SIGHUP with a typo: reload exit $rc, not 78 (refused): ${answer:-no message}"
    elif poll 20 prom_updated_is_not "$updated" && prom_has_locality; then
        pass "SIGHUP with a typo refused (exit 78: $(grep -o 'outputs\.levle: [^(;]*[^ (;]' <<<"$answer" | head -n 1)); still serving the last good configuration: the next scheduled result (updated $(prom_value geoattrd_location_updated_timestamp_seconds)) written at level locality"
    else
        fail "SIGHUP with a typo: refused, but no result at level locality followed within 20 s: $(grep '^geoattrd_location_info' "$dir/geoattrd.prom" 2>/dev/null || echo none)"
    fi
    write_config "$dir" locality 2
}

state_is() { [ "$(status | field state)" = "$1" ] && [ "$(status | field fix_in_flight)" = false ]; }
# The served result older than N s: in the foreground a fix is taken every TTL (2 s).
overdue() {
    local age
    age=$(status | field cache_age_s)
    [ "${age:-0}" -ge "$1" ]
}
fix_attempts() { grep -c 'taking a fix' "$dir/log" || true; }

check_pause_resume() {
    local generation attempts answer started
    printf background >"$dir/state"
    if ! poll 10 state_is background; then
        fail "state file background: status still says $(status | field state)"
        return
    fi
    answer=$(status)
    generation=$(field generation <<<"$answer") attempts=$(fix_attempts)
    if ! poll 20 overdue 6; then
        fail "paused: the served result never grew 6 s old: $(status)"
    elif [ "$(status | field generation)" = "$generation" ] && [ "$(fix_attempts)" -eq "$attempts" ] &&
        ! status | grep -q '"next_fix_at"'; then
        pass "state file background: status state background, no next_fix_at; the result grew $(status | field cache_age_s) s old (ttl_s 2) with no fix taken (generation $generation, no new 'taking a fix' in the log)"
    else
        fail "paused, yet a fix was taken: generation $generation -> $(status | field generation), fix attempts $attempts -> $(fix_attempts)"
    fi
    started=$(now_us)
    printf foreground >"$dir/state"
    if poll 15 generation_is_not "$generation" && [ "$(status | field state)" = foreground ]; then
        pass "state file foreground: resumed, a fix at once (the result was older than ttl_s): generation $(status | field generation) after $(seconds "$started") s"
    else
        fail "state file foreground: no fix within 15 s: $(status)"
    fi
}

check_sigterm() {
    local bound=10
    stop_daemon
    if [ "$stop_status" -eq 0 ] && awk -v s="$stop_seconds" -v b="$bound" 'BEGIN { exit !(s <= b) }' && [ ! -e "$sock" ]; then
        pass "SIGTERM: exit status 0 after $stop_seconds s (bound $bound s), the socket it bound removed"
    else
        fail "SIGTERM: exit status $stop_status after $stop_seconds s (bound $bound s); socket $([ -e "$sock" ] && echo left behind || echo removed)"
    fi
}

gpsd_gone() { ! ss -Hltn "sport = :$gpsd_port" | grep -q .; }
attempt_failed() { [ -n "$(status | field error)" ]; }

check_cached_restart() {
    local cached answer served rc=0
    stop_gpsd
    poll 10 gpsd_gone || fail "gpsd still listens on port $gpsd_port after gpsfake was stopped"
    cached=$(field generation <"$dir/cache/cache.json")
    start_daemon arm64 "$dir"
    poll 30 served_country || rc=$?
    served=$(seconds "$daemon_started")
    answer=$(ctl get 2>/dev/null || true)
    if [ "$rc" -ne 0 ] || [ "$(field generation <<<"$answer")" != "$cached" ]; then
        fail "restarted with gpsd stopped: served generation $(field generation <<<"$answer") (cache.json: $cached), poll status $rc: ${answer:-nothing}"
        return
    fi
    poll 30 attempt_failed || true
    pass "restarted with gpsd stopped: serves the cached $(field geo.country.iso_code <<<"$answer") $(field geo.locality.name <<<"$answer") (generation $cached from cache.json, age_s $(field age_s <<<"$answer"), stale $(field stale <<<"$answer")) $served s after start; its own fix attempt: $(status | field error | sed 's/ (.*//; s/^$/none yet/')"
    stop_daemon
    [ "$stop_status" -eq 0 ] || fail "the restarted daemon exited $stop_status on SIGTERM"
}

on_exit() {
    local rc=$?
    trap - EXIT
    if [ -n "$daemon_pid" ]; then stop_daemon; fi
    stop_gpsd
    rm -rf "$work"
    if [ "$rc" -ne 0 ] && [ "$failures" -eq 0 ]; then fail "daemon-test stopped before its end (exit $rc)"; fi
    printf 'daemon-test: %d passed, %d failed in %s s\n' "$passes" "$failures" "$(seconds "$script_started")"
    [ "$failures" -eq 0 ] || exit 1
    exit "$rc"
}
trap on_exit EXIT
trap 'exit 130' INT TERM

# Which C library the arm64 daemon runs on, in its own words.
echo "daemon-test: arm64 geoattrd under qemu-aarch64-static -L $sysroot: $(qemu-aarch64-static -L "$sysroot" "$sysroot/lib/aarch64-linux-gnu/libc.so.6" | head -n 1)"
start_gpsd
time_first_fixes
check_curl_matches_get
check_sigusr1
check_sighup
check_pause_resume
check_sigterm
check_cached_restart
