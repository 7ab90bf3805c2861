# shellcheck shell=bash
# The container scripts/systemd-test.sh's sections run in (sourced by it after tree.sh, which
# names the cached tree; the caller sets deb and geodata): an overlay of the tree per
# boot, the track gpsfake replays, the boot, and gpsd serving the track. install.sh says how the
# package gets in.

# The container's systemd needs cgroup v2 for IPAddressDeny='s BPF programs (the host may run a
# hybrid hierarchy or no systemd at all, hence --register=no --keep-unit), and bpf() itself,
# which nspawn filters by default.
export SYSTEMD_NSPAWN_UNIFIED_HIERARCHY=1
nspawn=(systemd-nspawn -q --register=no --keep-unit --private-network --system-call-filter=bpf)

# --- A run: its directory, and the container's overlay -----------------------------------------
# start_run: what earlier runs left behind cleared, this run's directory named, and its clean-up
# on exit set.
start_run() {
    # Runs of processes that died without their trap: nothing of theirs is running any more.
    for stale in "$cache"/run.*; do
        [ -d "$stale" ] || continue
        kill -0 "${stale##*.}" 2>/dev/null && continue
        if [ -s "$stale/nspawn.pid" ] && kill -0 "$(cat "$stale/nspawn.pid")" 2>/dev/null; then
            echo "systemd-test: $stale: its container still runs (systemd-nspawn pid $(cat "$stale/nspawn.pid")): left alone" >&2
            continue
        fi
        mountpoint -q "$stale/root" && umount -l "$stale/root"
        rm -rf "$stale"
    done
    run=$cache/run.$$
    nspawn_pid=
    leader=
    root=$run/root
    trap cleanup EXIT
    trap 'exit 130' INT TERM HUP
}
# poweroff_container: the running container, if any, powered off and its overlay unmounted.
poweroff_container() {
    if [ -n "$nspawn_pid" ] && kill -0 "$nspawn_pid" 2>/dev/null; then
        # nspawn turns SIGTERM into a clean poweroff of a booted container.
        kill -TERM "$nspawn_pid"
        for _ in $(seq 300); do kill -0 "$nspawn_pid" 2>/dev/null || break; sleep 0.1; done
        if kill -0 "$nspawn_pid" 2>/dev/null; then
            echo "systemd-test: the container did not power off in 30 s: killing it" >&2
            # The container's PID 1: the kernel kills its whole PID namespace with it.
            [ -n "$leader" ] && kill -KILL "$leader"
            kill -KILL "$nspawn_pid"
        fi
        wait "$nspawn_pid" 2>/dev/null
    fi
    nspawn_pid= leader=
    # The repository bound into a chroot (section 19), when that did not finish.
    if mountpoint -q "$run/root/srv/geoattrd-repo"; then umount "$run/root/srv/geoattrd-repo" || umount -l "$run/root/srv/geoattrd-repo"; fi
    if mountpoint -q "$run/root"; then umount "$run/root" 2>/dev/null || umount -l "$run/root"; fi
}
cleanup() {
    local status=$?
    set +e
    poweroff_container
    stop_repo_agent
    rm -rf "$run"
    echo "systemd-test: $((SECONDS / 60)) min $((SECONDS % 60)) s in all"
    exit "$status"
}
# fresh_overlay: an empty overlay of the cached tree at $run/root (what a previous one held is gone).
fresh_overlay() {
    rm -rf "$run/upper" "$run/work"
    mkdir -p "$run/upper" "$run/work" "$run/root" "$run/repo"
    mount -t overlay overlay -o "lowerdir=$tree/root,upperdir=$run/upper,workdir=$run/work" "$run/root"
}

# The track: a steady 3D fix, one epoch (GGA, GSA, two GSV, RMC) a second for a minute, ending
# now (gpsfake repeats it). Positions in microdegrees, written with six decimals of minutes.
lat_u=47376887 lon_u=8541694
lat=47.376887 lon=8.541694
nmea() {
    local body=$1 sum=0 i c
    for ((i = 0; i < ${#body}; i++)); do
        printf -v c '%d' "'${body:i:1}"
        sum=$((sum ^ c))
    done
    printf '$%s*%02X\r\n' "$body" "$sum"
}
minutes() { # MICRODEGREES DEGREE-DIGITS -> dddmm.mmmmmm
    local m=$(($1 % 1000000 * 60))
    printf "%0${2}d%02d.%06d" $(($1 / 1000000)) $((m / 1000000)) $((m % 1000000))
}
nlat=$(minutes "$lat_u" 2) nlon=$(minutes "$lon_u" 3)
# write_track: the track into the container's tree, ending now.
write_track() {
    local start t hms dmy
    start=$(($(date +%s) - 60))
    for ((t = start; t < start + 60; t++)); do
        read -r hms dmy < <(date -u -d "@$t" '+%H%M%S.00 %d%m%y')
        nmea "GPGGA,$hms,$nlat,N,$nlon,E,1,08,1.2,408.0,M,47.0,M,,"
        nmea "GPGSA,A,3,01,02,03,04,05,06,07,08,,,,,1.9,1.2,1.6"
        nmea "GPGSV,2,1,08,01,20,000,40,02,25,040,40,03,30,080,40,04,35,120,40"
        nmea "GPGSV,2,2,08,05,40,160,40,06,45,200,40,07,50,240,40,08,55,280,40"
        nmea "GPRMC,$hms,A,$nlat,N,$nlon,E,0.0,0.0,$dmy,,,A"
    done >"$root/root/track.nmea"
}

# --- Boot ------------------------------------------------------------------------------------
# A command inside the container: all its namespaces, a clean environment.
ct() { nsenter -t "$leader" -a env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 SYSTEMD_COLORS=0 SYSTEMD_PAGER= "$@"; }
# boot_container: boots $root and waits for its systemd to be up; exits when it does not come up.
boot_container() {
    local booted=$SECONDS state= deadline
    setsid "${nspawn[@]}" -M geoattr-test -b -D "$root" --bind-ro="$run/repo:$repo_mount" --console=read-only >"$run/console.log" 2>&1 </dev/null &
    nspawn_pid=$!
    echo "$nspawn_pid" >"$run/nspawn.pid"
    # The container's PID 1 is nspawn's child once that runs systemd (before, the child may be an
    # intermediate process of nspawn's that is about to exit).
    for _ in $(seq 200); do
        leader=$(ps --ppid "$nspawn_pid" -o pid=,comm= | awk '$2 == "systemd" { print $1; exit }' || true)
        [ -n "$leader" ] && break
        kill -0 "$nspawn_pid" 2>/dev/null || break
        sleep 0.1
    done
    if [ -z "$leader" ]; then
        sed 's/\x1b\[[0-9;]*m//g' "$run/console.log" >&2
        echo "systemd-test: systemd-nspawn did not start the container" >&2
        exit 1
    fi
    deadline=$((SECONDS + 90))
    while [ $SECONDS -lt $deadline ]; do
        state=$(ct timeout 60 systemctl is-system-running --wait 2>/dev/null || true)
        case $state in running | degraded) break ;; esac
        sleep 0.5
    done
    case $state in
    running) echo "systemd-test: the container's systemd is running ($((SECONDS - booted)) s)" ;;
    degraded)
        echo "systemd-test: the container's systemd is degraded ($((SECONDS - booted)) s); failed units:"
        ct systemctl --failed --no-legend | sed 's/^/      /'
        ;;
    *)
        sed 's/\x1b\[[0-9;]*m//g' "$run/console.log" | tail -n 40 >&2
        echo "systemd-test: the container's systemd did not come up (state: ${state:-none})" >&2
        exit 1
        ;;
    esac
}

# gpsd fed by gpsfake. gpsfake can lose its start-up race with gpsd's sockets and leave a gpsd
# without a device: ready means a watcher gets a 3D TPV, else it is started again.
gpsd_has_fix() {
    ct python3 - <<'PY'
import json, socket, sys, time
try:
    s = socket.create_connection(("127.0.0.1", 2947), timeout=3)
    s.settimeout(3)
    s.sendall(b'?WATCH={"enable":true,"json":true};\n')
    end = time.time() + 5
    for line in s.makefile("r"):
        if '"class":"TPV"' in line and json.loads(line).get("mode", 0) >= 3:
            sys.exit(0)
        if time.time() > end:
            break
except (OSError, ValueError):
    pass
sys.exit(1)
PY
}
# start_gpsd: gpsfake's gpsd serving the track; exits when it never serves a fix.
start_gpsd() {
    local ready= attempt
    for attempt in 1 2 3; do
        ct systemd-run --quiet --collect --unit=systemd-test-gpsfake gpsfake -n -q -P 2947 -c 0.2 /root/track.nmea
        for _ in $(seq 10); do
            if gpsd_has_fix; then ready=1; break; fi
            sleep 1
        done
        [ -n "$ready" ] && break
        echo "systemd-test: gpsfake attempt $attempt gave no fix; again"
        ct systemctl stop systemd-test-gpsfake 2>/dev/null || true
        sleep 1
    done
    [ -n "$ready" ] || { ct journalctl -u systemd-test-gpsfake --no-pager | tail -n 20 >&2; echo "systemd-test: gpsfake never served a fix" >&2; exit 1; }
    echo "systemd-test: gpsd (gpsfake) serves the track's 3D fix on the container's 127.0.0.1:2947"
}
