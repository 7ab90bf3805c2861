#!/usr/bin/env bash
# The packaged units under a real systemd: boots Debian 12 (systemd 252) as PID 1 of a
# systemd-nspawn container, installs the .deb in it (offline, as an image build would), with the
# world index package beside it when there is one (geoattrd-geodata of the same version), feeds a
# gpsd (gpsfake) on the container's 127.0.0.1:2947 a track generated here, and checks what
# check-units.sh cannot see offline, one PASS/FAIL line each:
#   1. both sockets listen and the first client's fix arrives through geoattrd-gpsd.socket and
#      its relay (the track's coordinates, to 1e-4 degrees);
#   2. geoattrd's network namespace: loopback only, the one 127.0.0.1:2947 listener, and neither
#      the container's other listeners nor other addresses reachable from it;
#   3. its /tmp and /var/tmp are private;
#   4. a restart keeps the namespace (same netns, `geoattrctl refresh --wait 30` succeeds);
#   5. its journal has nothing at warning or worse, and libdispatch's "Failed to set thread
#      priority" only as expected: never errno=1 (the syscall filter), at most one errno=13 per
#      daemon process (its attempt at nice -4 without CAP_SYS_NICE);
#   6. no restarts, no failed unit; the exposure systemd itself computes (informational);
#   7. Type=notify: active, and STATUS= shown by systemctl;
#   8. the runtime layout, after the first start and after the restart: /run/geoattrd
#      geoattrd:geoattrd 0755, the socket geoattrd:geoattr 0660, the state file a regular file
#      geoattrd:geoattr-state 0660 (RuntimeDirectory= re-owns the tree it finds owned otherwise);
#      a client (client1, group geoattr) gets the attributes but can create nothing in
#      /run/geoattrd, write the state file or move the socket; a supervisor (super1, groups
#      geoattr and geoattr-state) pauses and resumes the daemon through the state file, written in
#      place; `geoattrctl doctor` finds the layout right;
#   9. an upgrade from the old layout (/run/geoattrd geoattrd:geoattr 0770, no geoattr-state
#      group, a client's symbolic link at the state file's path): what a start does to it
#      (informational), then `dpkg -i` of the package again repairs it without following the link,
#      and the layout holds after the next start;
#  10. the Collector recipe (examples/collector/): its restart pair, geoattrd-env-restart@.path and
#      @.service, for a stand-in consumer with the recipe's drop-in: the consumer starts before
#      geoattrd's env file exists (EnvironmentFile=-), is restarted when geoattrd writes the file
#      and when a reload changes what it carries, sees its own attributes joined with geoattrd's,
#      and is not restarted when a fix rewrites the same content; and what the recipe rests on: a
#      unit with EnvironmentFile= and no "-" fails while the file is absent, and a variable from
#      the file replaces the same one from Environment= (4 to 5 s of the run).
#  11. Prometheus over loopback TCP, as docs/operating.md sets it up: geoattrd-metrics.socket and
#      geoattrd-metrics-proxy.socket enabled and started with geoattrd stopped; from the container's
#      loopback, the first scrape starts geoattrd, which takes the metrics socket from systemd;
#      GET /metrics on the proxy's port answers 200 with geoattrd_ families, and /v1/attributes,
#      /v1/status, /v1/watch, POST /v1/refresh, PUT /v1/state and / are 404; the relay runs as a
#      dynamic user with no network of its own.
#  12. node_exporter's textfile collector, as docs/operating.md sets it up: Debian's
#      prometheus-node-exporter (user prometheus, in group geoattr-metrics, a link from its default
#      directory) serves geoattrd_location_info and geoattrd_location_updated_timestamp_seconds
#      from /run/geoattrd/textfile/geoattrd.prom (geoattrd:geoattr-metrics 0640, in a directory
#      geoattrd:geoattr-metrics 2750); prometheus can read it and write nothing there, a client
#      outside the group cannot read it, and the layout survives a restart.
#  13. the env format under EnvironmentFile=: the escaping corpus (shell specials, combining marks,
#      controls, NUL, bytes that are not UTF-8), rendered by geoattrd's env encoder through the
#      escaping-corpus tool (swift build --product escaping-corpus, or ESCAPING_CORPUS=PATH), is
#      loaded by one transient unit and dumped by env -0: every variable holds exactly the value
#      an environment carries (docs/clients.md: control characters removed, noncharacters U+FFFD).
#  14. an upgrade over what a client planted in the old layout (section 9's group-writable
#      /run/geoattrd, the textfile directory group-writable too; outputs.env_file set): a
#      directory of its own at the env file's path holding a link to a directory of root's, a FIFO,
#      a symbolic link to a file of root's, a stray file in /run/geoattrd/textfile; with
#      geoattrd.service enabled, `dpkg -i` of the package again leaves the service running without
#      a client, removes each object and follows none (the targets unchanged), geoattrd then
#      writes the env file where the directory was, the textfile directory holds its own file alone,
#      and the layout holds after the next start;
#  15. the recipes as the documents write them, each from the package's geoattrd.yaml (the
#      outputs: lines and commands read from the documents at each run): docs/operating.md's
#      node_exporter textfile recipe (node_exporter bound to loopback) and examples/collector's
#      step 1 (the env file). After each, a user in none of geoattrd's groups and a client whose
#      access rule is none (access.rules uid:UID=none) try the env file, the textfile,
#      node_exporter's http://127.0.0.1:9100/metrics and the API: nothing finer than the recipe's
#      outputs.level reaches either (no coordinates below exact, no postal code below postal, no
#      locality below locality, no region below region), and the API gives the second no geo.*
#      attribute at all;
#  16. scraping while a local user holds idle connections: 512 to 127.0.0.1:2948 (twice the
#      relay's limit), half idle after one answered request, half silent, none opened again once
#      closed; a scraper retrying for up to 30 s gets GET /metrics answered 200 (the metrics socket
#      closes silent and idle connections after 5 s).
#  17. gpsd's guard (geoattrd-gpsd-guard.service, opt-in): off, a user in none of geoattrd's
#      groups reads gpsd's reports on 127.0.0.1:2947 and `geoattrctl doctor` (as root) warns that
#      any local user reaches gpsd; on, that user is refused (a reset) while root's and the
#      relay's user's (geoattrd-gpsd) go through, geoattrd still reaches gpsd through its relay,
#      doctor says a local user no one named is refused, and a name in GPSD_GUARD_USERS lets that
#      user in; stopped, the table is gone.
#  18. the operator's walk, in a container booted afresh, with dpkg -i under a running systemd
#      (only when PREVIOUS_DEB names the previous release's package): that release (with this
#      tree's geoattrd-geodata when there is one), outputs as docs/operating.md's textfile recipe,
#      `systemctl enable --now geoattrd`, the first fix; the upgrade to DEB (the edited conffile
#      kept) and the same package again, enabled and then running but not enabled: each time
#      geoattrd.service runs again before any client connects, as the new program, and the
#      textfile moves on with the next fix; a reload with a
#      typo (schedule.tll_s) fails, systemctl status names the key and the daemon keeps serving,
#      the corrected one succeeds and its refresh.burst is in force; the troubleshooting rows
#      systemd can provoke: 429 refresh_budget_spent then refresh.burst raised and a reload (the
#      next refresh succeeds at once), a uid rule of none (the 403 and doctor's access row name it;
#      the changed rule and a reload let the user in), the state file replaced by a rename as root
#      (doctor warns; systemd-tmpfiles --create geoattrd.conf repairs it), geoattrd-geodata removed
#      under the running daemon (doctor says to install it); `dpkg -r` (no unit active,
#      /etc/geoattrd and the groups kept) and `dpkg -P` (/etc/geoattrd, /var/lib/geoattrd,
#      /run/geoattrd and the groups gone, the dropped memberships said, no not-found unit left).
# The units tested are the package's: nothing in it is replaced.
#
#   sudo bash scripts/systemd-test.sh [DEB [GEODATA-DEB]]
#     DEB          default: the newest dist/geoattrd_*_ARCH.deb (ARCH: dpkg --print-architecture)
#     GEODATA-DEB  default: geoattrd-geodata_VERSION_all.deb beside DEB, if there is one
#
# Needs root and, the first time, the network: the container's tree (220 MB) is built once with
# debootstrap into .build-systemd/root (about 2 minutes; again when .build-systemd/root.ok is
# missing or names another recipe). Each run boots an overlayfs copy of it, thrown away on exit,
# and takes about 40 s for sections 1 to 17 (a minute more when the fix does not arrive), then
# about 25 s for section 18 in a second copy. Installs debootstrap and systemd-container if
# missing.
#   PREVIOUS_DEB        the previous release's geoattrd package, for section 18
#                       (PREVIOUS_DEB=$(bash scripts/previous-release-deb.sh)); unset: section 18
#                       is skipped
#   DEBIAN_MIRROR       default: the host's configured Debian mirror, else deb.debian.org
#   SYSTEMD_TEST_IDLE=1 also waits for the relay to exit after its idle minute and checks that
#                       the next fix starts it again (about 70 s more)
set -euo pipefail
cd "$(dirname "$0")/.."

arch=$(dpkg --print-architecture)
deb=${1:-$(ls -t dist/geoattrd_*_"$arch".deb 2>/dev/null | head -n 1 || true)}
if [ -z "$deb" ]; then
    echo "systemd-test: no dist/geoattrd_*_$arch.deb: run scripts/make-deb.sh first (or pass a .deb)" >&2
    exit 1
fi
[ -f "$deb" ] || { echo "systemd-test: $deb does not exist" >&2; exit 1; }
deb=$(realpath "$deb")
geodata=${2:-$(dirname "$deb")/geoattrd-geodata_$(dpkg-deb -f "$deb" Version)_all.deb}
if [ -f "$geodata" ]; then
    geodata=$(realpath "$geodata")
elif [ -n "${2:-}" ]; then
    echo "systemd-test: $geodata does not exist" >&2
    exit 1
else
    geodata=
fi
# The previous release, for section 18's upgrade (scripts/previous-release-deb.sh builds it).
previous=${PREVIOUS_DEB:-}
if [ -n "$previous" ]; then
    [ -f "$previous" ] || { echo "systemd-test: PREVIOUS_DEB=$previous does not exist" >&2; exit 1; }
    previous=$(realpath "$previous")
fi
[ "$(id -u)" -eq 0 ] || { echo "systemd-test: needs root (debootstrap, mounts, systemd-nspawn)" >&2; exit 1; }
if ! command -v debootstrap >/dev/null || ! command -v systemd-nspawn >/dev/null; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap systemd-container >/dev/null
fi

# The container's systemd needs cgroup v2 for IPAddressDeny='s BPF programs (the host may run a
# hybrid hierarchy or no systemd at all, hence --register=no --keep-unit), and bpf() itself,
# which nspawn filters by default.
export SYSTEMD_NSPAWN_UNIFIED_HIERARCHY=1
nspawn=(systemd-nspawn -q --register=no --keep-unit --private-network --system-call-filter=bpf)

# --- The cached tree -------------------------------------------------------------------------
cache=$PWD/.build-systemd
# gpsd-clients (gpsfake) depends on GTK and matplotlib (1.5 GB, and a dconf trigger that fails
# without a session bus): the tree takes gpsd and python3-gps, and gpsfake alone from that package.
# prometheus-node-exporter: Debian's node_exporter, which section 12 points at geoattrd's textfile.
packages=systemd,systemd-sysv,dbus,gpsd,python3-gps,python3-distutils,libgps28,libyaml-0-2,libstdc++6,iproute2,procps
packages+=,prometheus-node-exporter
# nftables: gpsd's guard (section 17).
packages+=,nftables
recipe="bookworm minbase $packages +gpsfake v1"
if [ "$(cat "$cache/root.ok" 2>/dev/null || true)" != "$recipe" ]; then
    mirror=${DEBIAN_MIRROR:-}
    if [ -z "$mirror" ]; then
        mirror=$( { sed -n 's/^URIs:[[:space:]]*//p' /etc/apt/sources.list.d/*.sources 2>/dev/null | tr ' ' '\n'
            awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /^https?:/) print $i }' /etc/apt/sources.list 2>/dev/null
        } | grep -E '^https?://.*/debian/?$' | head -n 1 || true)
        mirror=${mirror:-http://deb.debian.org/debian}
    fi
    echo "systemd-test: building the container's tree (debootstrap bookworm from $mirror, once)"
    built=$SECONDS
    rm -rf "$cache/root" "$cache/root.new" "$cache/root.ok"
    mkdir -p "$cache"
    # A mirror's hiccup is not a finding: three attempts, 20 s apart.
    for attempt in 1 2 3; do
        rm -rf "$cache/root.new"
        debootstrap --variant=minbase --include="$packages" bookworm "$cache/root.new" "$mirror" \
            >"$cache/debootstrap.log" 2>&1 && break
        tail -n 30 "$cache/debootstrap.log" >&2
        if [ "$attempt" -eq 3 ]; then
            echo "systemd-test: debootstrap failed 3 times (log: $cache/debootstrap.log)" >&2
            exit 1
        fi
        echo "systemd-test: debootstrap failed (attempt $attempt of 3); again in 20 s" >&2
        sleep 20
    done
    # gpsfake is a Python script on python3-gps: take it alone from gpsd-clients.
    systemd-nspawn -q --register=no --keep-unit -D "$cache/root.new" sh -ec '
        apt-get update -qq
        cd /tmp && apt-get download -qq gpsd-clients
        dpkg-deb --fsys-tarfile gpsd-clients_*.deb | tar -x -C / ./usr/bin/gpsfake
        rm -f gpsd-clients_*.deb
        apt-get clean && rm -rf /var/lib/apt/lists/*' >>"$cache/debootstrap.log" 2>&1 ||
        { tail -n 20 "$cache/debootstrap.log" >&2; echo "systemd-test: fetching gpsfake failed" >&2; exit 1; }
    # gpsfake's gpsd takes port 2947: Debian's gpsd.socket and gpsd.service stay out of the way
    # (masked, so geoattrd-gpsd.service's Wants=gpsd.socket starts nothing).
    rm -f "$cache/root.new/etc/systemd/system/sockets.target.wants/gpsd.socket" \
        "$cache/root.new/etc/systemd/system/multi-user.target.wants/gpsd.service"
    ln -sf /dev/null "$cache/root.new/etc/systemd/system/gpsd.socket"
    ln -sf /dev/null "$cache/root.new/etc/systemd/system/gpsd.service"
    # node_exporter starts when section 12 has configured it, not at boot.
    rm -f "$cache/root.new/etc/systemd/system/multi-user.target.wants/prometheus-node-exporter.service"
    mv "$cache/root.new" "$cache/root"
    printf '%s\n' "$recipe" >"$cache/root.ok"
    echo "systemd-test: tree built in $((SECONDS - built)) s ($(du -sh "$cache/root" | cut -f1))"
fi

# --- This run: an overlay of the tree, the package installed offline ---------------------------
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
    if mountpoint -q "$run/root"; then umount "$run/root" 2>/dev/null || umount -l "$run/root"; fi
}
cleanup() {
    local status=$?
    set +e
    poweroff_container
    rm -rf "$run"
    echo "systemd-test: $((SECONDS / 60)) min $((SECONDS % 60)) s in all"
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP
# fresh_overlay: an empty overlay of the cached tree at $run/root (what a previous one held is gone).
fresh_overlay() {
    rm -rf "$run/upper" "$run/work"
    mkdir -p "$run/upper" "$run/work" "$run/root"
    mount -t overlay overlay -o "lowerdir=$cache/root,upperdir=$run/upper,workdir=$run/work" "$run/root"
}
fresh_overlay
root=$run/root

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
write_track

deb_name=$(basename "$deb")
installing=("/root/$deb_name")
binds=(--bind-ro="$deb:/root/$deb_name")
# Without the world index package (CI builds no index) the daemon serves location attributes
# only, and it says so at each start: expected then, and only then.
if [ -n "$geodata" ]; then
    index_expected=yes
    installing+=("/root/$(basename "$geodata")")
    binds+=(--bind-ro="$geodata:/root/$(basename "$geodata")")
else
    index_expected=no
    echo "NOTE  no geoattrd-geodata package: the daemon warns \"geocoder index refused\" at each start, expected here"
fi
echo "systemd-test: installing ${installing[*]#/root/} (offline)"
if ! "${nspawn[@]}" -D "$root" "${binds[@]}" dpkg -i "${installing[@]}" >"$run/dpkg.log" 2>&1; then
    cat "$run/dpkg.log" >&2
    echo "systemd-test: dpkg -i failed" >&2
    exit 1
fi
for unit in geoattrd.socket geoattrd-gpsd.socket; do
    link=$root/etc/systemd/system/sockets.target.wants/$unit
    if [ -L "$link" ]; then
        echo "NOTE  the package's postinst enabled $unit offline"
    else
        echo "NOTE  the package's postinst did not enable $unit offline: enabling it here"
        mkdir -p "$(dirname "$link")"
        ln -s "/lib/systemd/system/$unit" "$link"
    fi
done

# --- Boot ------------------------------------------------------------------------------------
# A command inside the container: all its namespaces, a clean environment.
ct() { nsenter -t "$leader" -a env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 SYSTEMD_COLORS=0 SYSTEMD_PAGER= "$@"; }
# boot_container: boots $root and waits for its systemd to be up; exits when it does not come up.
boot_container() {
    local booted=$SECONDS state= deadline
    setsid "${nspawn[@]}" -M geoattr-test -b -D "$root" --console=read-only >"$run/console.log" 2>&1 </dev/null &
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
boot_container

failures=0
pass() { printf 'PASS  %s\n' "$*"; }
fail() {
    printf 'FAIL  %s\n' "$*"
    failures=$((failures + 1))
}
info() { printf 'INFO  %s\n' "$*"; }
indent() { sed 's/^/      /'; }
# ct_as USER COMMAND...: a command inside the container as USER, with its groups.
ct_as() {
    local user=$1
    shift
    ct runuser -u "$user" -- "$@"
}
# The runtime layout (tmpfiles.d/geoattrd.conf, geoattrd.socket), as lstat sees it: three lines.
layout_checks() {
    local when=$1 got
    got=$(ct stat -c '%U:%G %a %F' /run/geoattrd 2>&1 || true)
    if [ "$got" = "geoattrd:geoattrd 755 directory" ]; then
        pass "$when: /run/geoattrd is geoattrd:geoattrd 0755"
    else
        fail "$when: /run/geoattrd is '$got', expected geoattrd:geoattrd 755 directory"
    fi
    got=$(ct stat -c '%U:%G %a %F' /run/geoattrd/geoattrd.sock 2>&1 || true)
    if [ "$got" = "geoattrd:geoattr 660 socket" ]; then
        pass "$when: /run/geoattrd/geoattrd.sock is a socket, geoattrd:geoattr 0660"
    else
        fail "$when: /run/geoattrd/geoattrd.sock is '$got', expected geoattrd:geoattr 660 socket"
    fi
    got=$(ct stat -c '%U:%G %a %F' /run/geoattrd/state 2>&1 || true)
    case $got in
    "geoattrd:geoattr-state 660 regular file" | "geoattrd:geoattr-state 660 regular empty file")
        pass "$when: /run/geoattrd/state is a regular file, geoattrd:geoattr-state 0660"
        ;;
    *) fail "$when: /run/geoattrd/state is '$got', expected a regular file geoattrd:geoattr-state 660" ;;
    esac
}
# daemon_state: the state geoattrd reports (geoattrctl status, its state field).
daemon_state() {
    ct timeout 10 geoattrctl status 2>/dev/null | ct python3 -c 'import json, sys; print(json.load(sys.stdin)["state"])' 2>/dev/null || true
}
# wait_state STATE: up to 10 s for geoattrd to report STATE; prints the seconds it took.
wait_state() {
    local started=$SECONDS
    while [ $((SECONDS - started)) -lt 10 ]; do
        [ "$(daemon_state)" = "$1" ] && { echo $((SECONDS - started)); return 0; }
        sleep 0.5
    done
    return 1
}

# Something outside geoattrd's namespace to (not) reach: a second interface with an address of its
# own, and an HTTP server on all the container's addresses.
ct ip link add st0 type veth peer name st1
ct ip addr add 10.231.0.1/24 dev st0
ct ip link set st0 up
ct ip link set st1 up
ct systemd-run --quiet --collect --unit=systemd-test-http python3 -m http.server --bind 0.0.0.0 --directory /usr/share 8080
for _ in $(seq 50); do
    [ -n "$(ct ss -Hltn 'sport = :8080' || true)" ] && break
    sleep 0.1
done
# connect NETNS-PID HOST PORT: a TCP connection from that process's network namespace; prints why not.
connect() {
    local out
    if out=$(ct nsenter -t "$1" -n timeout 3 bash -c "exec 3<>/dev/tcp/$2/$3" 2>&1); then return 0; fi
    out=$(printf '%s\n' "$out" | tail -n 1)
    echo "${out##*: }"
    return 1
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
start_gpsd

# --- 1. Sockets, socket activation, the fix through the relay -----------------------------------
sockets=$(ct systemctl is-active geoattrd.socket geoattrd-gpsd.socket | tr '\n' ' ' || true)
if [ "$sockets" = "active active " ]; then
    pass "geoattrd.socket and geoattrd-gpsd.socket active (geoattrd.service $(ct systemctl is-active geoattrd.service || true) before the first client)"
else
    fail "geoattrd.socket, geoattrd-gpsd.socket: $sockets"
fi
fix_started=$SECONDS
got=
deadline=$((SECONDS + 45))
while [ $SECONDS -lt $deadline ]; do
    if got=$(ct timeout 20 geoattrctl get 2>&1) && [[ $got == *'"geo.location.lat"'* ]]; then break; fi
    sleep 1
done
got_lat=$(printf '%s' "$got" | sed -n 's/.*"geo\.location\.lat":\([-0-9.e]*\).*/\1/p')
got_lon=$(printf '%s' "$got" | sed -n 's/.*"geo\.location\.lon":\([-0-9.e]*\).*/\1/p')
if [ -n "$got_lat" ] && [ -n "$got_lon" ] &&
    awk -v a="$got_lat" -v b="$lat" -v c="$got_lon" -v d="$lon" 'BEGIN { exit !((a - b) ^ 2 <= 1e-8 && (c - d) ^ 2 <= 1e-8) }'; then
    pass "first geoattrctl get (socket activation) has the track's fix after $((SECONDS - fix_started)) s: lat $got_lat lon $got_lon (track $lat $lon)"
else
    fail "no fix with the track's coordinates within 45 s; geoattrctl get said: $(printf '%s' "$got" | tail -c 400)"
fi

# --- 8. The runtime layout, after the first start; a client and a supervisor ------------------------
layout_checks "after the first start"
ct useradd --no-create-home --shell /usr/sbin/nologin --groups geoattr client1
ct useradd --no-create-home --shell /usr/sbin/nologin --groups geoattr,geoattr-state super1
if got=$(ct_as client1 timeout 20 geoattrctl get 2>&1) && [[ $got == *'"geo.location.lat"'* ]]; then
    pass "client1 (group geoattr): geoattrctl get answers"
else
    fail "client1 (group geoattr): geoattrctl get: $(printf '%s' "$got" | tail -c 300)"
fi
# Each must fail: a file, a FIFO, a symbolic link or a socket of the client's own in /run/geoattrd.
planted=()
ct_as client1 touch /run/geoattrd/planted 2>/dev/null && planted+=(file)
ct_as client1 mkfifo /run/geoattrd/planted.fifo 2>/dev/null && planted+=(FIFO)
ct_as client1 ln -s /etc/passwd /run/geoattrd/planted.link 2>/dev/null && planted+=("symbolic link")
ct_as client1 python3 -c 'import socket; socket.socket(socket.AF_UNIX).bind("/run/geoattrd/planted.sock")' 2>/dev/null &&
    planted+=(socket)
left=$(ct find /run/geoattrd -mindepth 1 -name 'planted*' | tr '\n' ' ' || true)
if [ ${#planted[@]} -eq 0 ] && [ -z "$left" ]; then
    pass "client1 cannot create anything in /run/geoattrd (a file, a FIFO, a symbolic link, a socket: all refused)"
else
    fail "client1 created in /run/geoattrd: ${planted[*]} ($left)"
fi
before=$(ct cat /run/geoattrd/state 2>&1 || true)
if ! ct_as client1 sh -c 'echo background > /run/geoattrd/state' 2>/dev/null &&
    ! ct_as client1 sh -c 'echo background >> /run/geoattrd/state' 2>/dev/null &&
    [ "$(ct cat /run/geoattrd/state 2>&1 || true)" = "$before" ]; then
    pass "client1 cannot write the state file (refused, its content unchanged)"
else
    fail "client1 wrote the state file: now '$(ct cat /run/geoattrd/state 2>&1 | head -c 100)'"
fi
moved=()
ct_as client1 mv /run/geoattrd/geoattrd.sock /run/geoattrd/aside.sock 2>/dev/null && moved+=("renamed it")
ct_as client1 rm -f /run/geoattrd/geoattrd.sock 2>/dev/null && moved+=("removed it")
if [ ${#moved[@]} -eq 0 ] && [ "$(ct stat -c %F /run/geoattrd/geoattrd.sock 2>&1 || true)" = socket ] &&
    ct_as client1 timeout 20 geoattrctl get >/dev/null 2>&1; then
    pass "client1 cannot move or remove the socket (mv and rm refused; it still answers)"
else
    fail "client1 and the socket: ${moved[*]:-refused}; now $(ct ls -l /run/geoattrd 2>&1 | tr '\n' ';')"
fi
supervised=()
if ct_as super1 sh -c 'echo background > /run/geoattrd/state' && took=$(wait_state background); then
    supervised+=("background after ${took} s")
    if ct_as super1 sh -c 'echo foreground > /run/geoattrd/state' && took=$(wait_state foreground); then
        supervised+=("foreground again after ${took} s")
    fi
fi
if [ ${#supervised[@]} -eq 2 ] && ! ct_as super1 touch /run/geoattrd/planted 2>/dev/null; then
    pass "super1 (geoattr, geoattr-state) writes the state file in place: geoattrd reports ${supervised[0]}, ${supervised[1]}; it cannot create a file beside it"
else
    fail "super1 and the state file: ${supervised[*]:-no change reported}; geoattrd reports $(daemon_state)"
fi
doctor=$(ct timeout 60 geoattrctl doctor --gpsd 127.0.0.1:2947 --timeout 20 2>&1 || true)
if printf '%s\n' "$doctor" | grep -q '^\[ok  \] runtime dir: /run/geoattrd geoattrd:geoattrd 0755' &&
    printf '%s\n' "$doctor" | grep -q '^\[ok  \] state file: /run/geoattrd/state geoattrd:geoattr-state 0660' &&
    ! printf '%s\n' "$doctor" | grep -E '^\[(warn|FAIL)\] (runtime dir|state file)' >/dev/null; then
    pass "geoattrctl doctor: $(printf '%s\n' "$doctor" | grep -E '^\[ok  \] (runtime dir|state file)' | sed 's/^\[ok  \] //' | paste -sd ';' | sed 's/;/; /g')"
else
    fail "geoattrctl doctor does not find the runtime layout right:"
    printf '%s\n' "$doctor" | indent
fi

# --- 2. geoattrd's network namespace --------------------------------------------------------------
pid=$(ct systemctl show -p MainPID --value geoattrd.service)
if [ -z "$pid" ] || [ "$pid" = 0 ]; then
    fail "geoattrd.service has no main process: network and /tmp checks skipped"
    pid=
fi
if [ -n "$pid" ]; then
    addresses=$(ct nsenter -t "$pid" -n ip -br addr || true)
    container_links=$(ct ip -br addr | awk '{ printf "%s%s", sep, $1; sep = " " }' || true)
    if [ "$(printf '%s\n' "$addresses" | awk '{ print $1 }')" = lo ]; then
        pass "geoattrd's network: lo only ($(echo $addresses)); the container's: $container_links"
    else
        fail "geoattrd's network has more than lo:"
        printf '%s\n' "$addresses" | indent
    fi
    listeners=$(ct nsenter -t "$pid" -n ss -Hltn | awk '{ print $4 }' | sort | tr '\n' ' ' || true)
    if [ "$listeners" = "127.0.0.1:2947 " ]; then
        pass "geoattrd's network: one listener, 127.0.0.1:2947 (geoattrd-gpsd.socket)"
    else
        fail "geoattrd's network: listeners '$listeners', expected 127.0.0.1:2947 alone"
    fi
    # The same connections from the container's own network first: they must work there.
    controls=ok
    for target in "127.0.0.1 8080" "10.231.0.1 8080"; do
        # shellcheck disable=SC2086
        why=$(connect 1 $target) || { controls="the container itself cannot reach ${target/ /:} ($why)"; break; }
    done
    if [ "$controls" != ok ]; then
        fail "reachability controls: $controls"
    else
        blocked=() reached=()
        for target in "127.0.0.1 8080" "10.231.0.1 8080" "1.1.1.1 53"; do
            # shellcheck disable=SC2086
            if why=$(connect "$pid" $target); then reached+=("${target/ /:}"); else blocked+=("${target/ /:} (${why:-timeout})"); fi
        done
        if [ ${#reached[@]} -eq 0 ]; then
            pass "from geoattrd's network, unreachable: ${blocked[*]}; from the container's, 127.0.0.1:8080 and 10.231.0.1:8080 answer"
        else
            fail "from geoattrd's network, reachable: ${reached[*]}"
        fi
    fi
fi

# --- 3. Private /tmp ------------------------------------------------------------------------------
if [ -n "$pid" ]; then
    ct touch "/tmp/systemd-test.$$" "/var/tmp/systemd-test.$$"
    mnt_init=$(ct readlink /proc/1/ns/mnt) mnt_geoattrd=$(ct readlink "/proc/$pid/ns/mnt" || true)
    if [ "$mnt_init" != "$mnt_geoattrd" ] && ct test -d "/proc/$pid/root/tmp" && ct test -d "/proc/$pid/root/var/tmp" &&
        ! ct test -e "/proc/$pid/root/tmp/systemd-test.$$" && ! ct test -e "/proc/$pid/root/var/tmp/systemd-test.$$"; then
        pass "geoattrd's /tmp and /var/tmp are private (its own mount namespace; the container's files not there)"
    else
        fail "geoattrd's /tmp or /var/tmp is the container's (mount namespaces $mnt_init, $mnt_geoattrd)"
    fi
fi

# --- 4. A restart keeps the namespace -------------------------------------------------------------
netns_before=${pid:+$(ct readlink "/proc/$pid/ns/net" || true)}
if ct systemctl restart geoattrd.service; then
    pid2=$(ct systemctl show -p MainPID --value geoattrd.service)
    netns_after=$(ct readlink "/proc/$pid2/ns/net" 2>/dev/null || true)
    if refreshed=$(ct timeout 60 geoattrctl refresh --wait 30 2>&1); then
        if [ -n "$netns_before" ] && [ "$netns_before" = "$netns_after" ]; then
            pass "systemctl restart geoattrd (pid $pid -> $pid2, same $netns_after), then geoattrctl refresh --wait 30: exit 0"
        else
            fail "after the restart geoattrd is in ${netns_after:-no} network namespace, was ${netns_before:-none} (the refresh worked)"
        fi
    else
        fail "after systemctl restart geoattrd, geoattrctl refresh --wait 30 failed: $(printf '%s' "$refreshed" | tail -c 400)"
    fi
else
    fail "systemctl restart geoattrd failed"
fi
layout_checks "after the restart"

# --- 5. The journal -------------------------------------------------------------------------------
# libdispatch logs "Failed to set thread priority for worker thread: ... errno=N" (at info) when it
# cannot renice a worker thread. errno=1 (EPERM) is the syscall filter refusing setpriority(): the
# unit allows it back, so none may appear (there were several per process, recurring). errno=13
# (EACCES) is its one attempt per process to raise a worker to nice -4, refused for want of
# CAP_SYS_NICE, which the unit does not grant: one per daemon process is expected (docs/operating.md,
# Units).
journal=$(ct journalctl -q -u geoattrd.service -o short-monotonic --no-pager || true)
renice=$(printf '%s\n' "$journal" | grep 'Failed to set thread priority' || true)
filtered=$(printf '%s\n' "$renice" | grep -c 'errno=1$' || true)
refused=$(printf '%s\n' "$renice" | grep -c 'errno=13$' || true)
other=$(printf '%s\n' "$renice" | grep . | grep -v -c -E 'errno=(1|13)$' || true)
processes=$(printf '%s\n' "$journal" | grep -o ' geoattrd\[[0-9]*\]:' | sort -u | grep -c . || true)
warnings=$(ct journalctl -q -u geoattrd.service -p warning -o short-monotonic --no-pager || true)
if [ "$index_expected" = no ]; then
    warnings=$(printf '%s\n' "$warnings" | grep -v 'geoattrd.index: geocoder index refused, serving location attributes only' || true)
fi
problems=()
[ "$filtered" -eq 0 ] || problems+=("$filtered thread-priority failure(s) with errno=1: the syscall filter refuses setpriority()")
[ "$refused" -le "$processes" ] || problems+=("$refused thread-priority failures with errno=13 for $processes daemon start(s): more than one each")
[ "$other" -eq 0 ] || problems+=("$other thread-priority failure(s) with another errno")
[ -z "$warnings" ] || problems+=("$(printf '%s\n' "$warnings" | grep -c .) line(s) at warning or worse")
if [ ${#problems[@]} -eq 0 ]; then
    expected_warning=""
    [ "$index_expected" = yes ] || expected_warning=" but the expected index warning"
    pass "geoattrd's journal: $(printf '%s\n' "$journal" | grep -c .) lines, nothing at warning or worse$expected_warning; thread priority: $refused expected errno=13 line(s) for $processes start(s), none from the syscall filter"
else
    fail "geoattrd's journal: $(IFS=';'; echo "${problems[*]}" | sed 's/;/; /g'):"
    printf '%s\n' "$renice" "$warnings" | grep . | indent
fi
relay=$(ct journalctl -q -u geoattrd-gpsd.service -p warning -o short-monotonic --no-pager || true)
[ -z "$relay" ] || { info "the relay's journal at warning or worse:"; printf '%s\n' "$relay" | indent; }

# --- 6. Restarts, failed units, exposure --------------------------------------------------------
shown=$(ct systemctl show -p NRestarts -p Result geoattrd.service | sort | tr '\n' ' ')
relay_result=$(ct systemctl show -p Result --value geoattrd-gpsd.service)
failed_units=$(ct systemctl --failed --no-legend --plain | awk '{ print $1 }' | tr '\n' ' ' || true)
if [ "$shown" = "NRestarts=0 Result=success " ] && [ "$relay_result" = success ] && [ -z "$failed_units" ]; then
    pass "geoattrd.service: ${shown% }; geoattrd-gpsd.service: Result=$relay_result; no failed units"
else
    fail "geoattrd.service: ${shown% }; geoattrd-gpsd.service: Result=$relay_result; failed units: ${failed_units:-none}"
fi
ct systemd-analyze security geoattrd.service geoattrd-gpsd.service 2>&1 | sed -n 's/^→ \(Overall exposure level.*\)/\1/p' |
    while read -r line; do info "systemd-analyze security (online): $line"; done || true

# --- 7. Type=notify -------------------------------------------------------------------------------
status=$(ct systemctl show -p StatusText --value geoattrd.service)
active=$(ct systemctl show -p Type -p ActiveState -p SubState --value geoattrd.service | tr '\n' ' ')
if [ -n "$status" ] && [ "$active" = "notify active running " ]; then
    pass "Type=notify: active (running), StatusText=\"$status\""
else
    fail "Type/ActiveState/SubState: $active; StatusText: \"$status\""
fi

# --- Optional: the relay's idle exit and re-activation -------------------------------------------
if [ "${SYSTEMD_TEST_IDLE:-0}" = 1 ]; then
    idle_started=$SECONDS
    deadline=$((SECONDS + 90))
    while [ $SECONDS -lt $deadline ] && [ "$(ct systemctl is-active geoattrd-gpsd.service || true)" = active ]; do sleep 2; done
    relay_state=$(ct systemctl is-active geoattrd-gpsd.service || true)
    invocation=$(ct systemctl show -p InvocationID --value geoattrd-gpsd.service)
    if [ "$relay_state" != active ] && ct timeout 60 geoattrctl refresh --wait 30 >/dev/null 2>&1 &&
        [ "$(ct systemctl show -p InvocationID --value geoattrd-gpsd.service)" != "$invocation" ]; then
        pass "the relay exited idle after $((SECONDS - idle_started)) s ($relay_state) and the next fix started it again"
    else
        fail "the relay: $relay_state after $((SECONDS - idle_started)) s of waiting, or the next fix did not start it again"
    fi
fi

# --- 9. An upgrade from the old runtime layout -------------------------------------------------------
# What the previous version left: /run/geoattrd geoattrd:geoattr 0770 (its tmpfiles.d line), no
# geoattr-state group, and a client that used its write access to replace the state file by a
# symbolic link to a file of root's.
ct sh -c 'printf secret >/root/victim && chmod 0600 /root/victim'
ct chgrp geoattr /run/geoattrd
ct chmod 0770 /run/geoattrd
if ct_as client1 sh -c 'rm -f /run/geoattrd/state && ln -s /root/victim /run/geoattrd/state'; then
    # RuntimeDirectory='s fix-up at a start, with the directory's group not the service's.
    ct systemctl restart geoattrd.service || true
    info "RuntimeDirectory= with /run/geoattrd geoattrd:geoattr 0770 (the old layout), at systemctl restart geoattrd: /run/geoattrd became $(ct stat -c '%U:%G %a' /run/geoattrd), the socket $(ct stat -c '%U:%G %a' /run/geoattrd/geoattrd.sock), the client's link $(ct stat -c '%U:%G' /run/geoattrd/state)"
    ct groupdel geoattr-state
    cp "$deb" "$root/root/$deb_name"
    if upgrade=$(ct dpkg -i "/root/$deb_name" 2>&1); then
        after=$(ct stat -c '%U:%G %a %F' /run/geoattrd /run/geoattrd/state 2>&1 | paste -sd ';' || true)
        victim=$(ct stat -c '%U:%G %a' /root/victim)$(ct cat /root/victim)
        case $after in
        "geoattrd:geoattrd 755 directory;geoattrd:geoattr-state 660 regular empty file") layout_ok=yes ;;
        *) layout_ok=no ;;
        esac
        if [ "$layout_ok" = yes ] && [ "$victim" = "root:root 600secret" ] &&
            [[ $upgrade == *"add device supervisors to it (usermod -aG geoattr-state USER)"* ]]; then
            pass "dpkg -i over the old layout: /run/geoattrd geoattrd:geoattrd 0755, the client's link replaced by an empty regular file geoattrd:geoattr-state 0660, its target untouched; the operator is told to add supervisors to geoattr-state"
        else
            fail "dpkg -i over the old layout: /run/geoattrd and the state file: '$after'; the link's target: '$victim'; dpkg said:"
            printf '%s\n' "$upgrade" | indent
        fi
    else
        fail "dpkg -i over the old layout failed:"
        printf '%s\n' "$upgrade" | indent
    fi
    if got=$(ct_as client1 timeout 30 geoattrctl get 2>&1) && [[ $got == *'"geo.location.lat"'* ]]; then
        pass "after the upgrade, client1's geoattrctl get starts geoattrd again and is answered"
    else
        fail "after the upgrade, client1's geoattrctl get: $(printf '%s' "$got" | tail -c 300)"
    fi
    layout_checks "after the upgrade and the next start"
else
    fail "the old layout: client1 could not replace the state file in a directory geoattrd:geoattr 0770"
fi

# --- 10. The Collector recipe (examples/collector/) ------------------------------------------------
# Its restart pair, geoattrd-env-restart@.path and @.service, for a stand-in consumer: my-exporter
# with the recipe's drop-in (EnvironmentFile=-, its own attributes joined with geoattrd's), a
# program that records each start and the OTEL_RESOURCE_ATTRIBUTES it was given. The consumer
# starts before the env file exists; geoattrd then writes the file (outputs.env_file set, a
# restart, a fix), a reload changes what it carries (outputs.level locality/2), and a forced fix
# rewrites the same content.
recipe_started=$SECONDS
units=$root/etc/systemd/system
mkdir -p "$units/my-exporter.service.d"
cp examples/collector/geoattrd-env-restart@.path examples/collector/geoattrd-env-restart@.service "$units/"
cp examples/collector/my-exporter.service.d/geoattrd.conf "$units/my-exporter.service.d/"
cat >"$units/my-exporter.service" <<'EOF'
[Unit]
Description=systemd-test: a stand-in for a service with an OpenTelemetry SDK
[Service]
ExecStart=/usr/local/bin/my-exporter
RuntimeDirectory=my-exporter
RuntimeDirectoryPreserve=yes
EOF
cat >"$root/usr/local/bin/my-exporter" <<'EOF'
#!/bin/sh
# Each start: the OTEL_RESOURCE_ATTRIBUTES it was given, then the start count.
set -eu
n=$(($(cat /run/my-exporter/starts 2>/dev/null || echo 0) + 1))
printf '%s\n' "${OTEL_RESOURCE_ATTRIBUTES-(unset)}" >/run/my-exporter/attributes
printf '%s\n' "$n" >/run/my-exporter/starts
exec sleep infinity
EOF
chmod 0755 "$root/usr/local/bin/my-exporter"
own=$(sed -n 's/^Environment=SERVICE_RESOURCE_ATTRIBUTES=//p' examples/collector/my-exporter.service.d/geoattrd.conf)
envfile=/run/geoattrd/geo.env
restarter=geoattrd-env-restart@my-exporter.service.service
# starts_reach N: up to 15 s for my-exporter's Nth start; prints the count it got to.
starts_reach() {
    local n=0
    for _ in $(seq 75); do
        n=$(ct cat /run/my-exporter/starts 2>/dev/null || true)
        case $n in '' | *[!0-9]*) n=0 ;; esac
        [ "$n" -ge "$1" ] && break
        sleep 0.2
    done
    echo "$n"
}
# restarter_idle: up to 15 s for the restart service to have no run under way.
restarter_idle() {
    for _ in $(seq 75); do
        case $(ct systemctl show -p ActiveState --value "$restarter") in activating | deactivating) sleep 0.2 ;; *) return 0 ;; esac
    done
}
# env_geo: what the env file carries, without the quotes.
env_geo() { ct sed -n 's/^OTEL_RESOURCE_ATTRIBUTES="\(.*\)"$/\1/p' "$envfile" 2>/dev/null || true; }
ct systemctl daemon-reload
ct rm -f "$envfile"

# a. Before the env file exists.
ct systemctl start my-exporter.service || true
starts=$(starts_reach 1)
attributes=$(ct cat /run/my-exporter/attributes 2>/dev/null || true)
# The control: the same without the "-".
if ct systemd-run --quiet --collect --wait -p EnvironmentFile="$envfile" /bin/true >/dev/null 2>&1; then control=started; else control=refused; fi
if [ "$(ct systemctl is-active my-exporter.service || true)" = active ] && [ "$starts" = 1 ] && [ "$attributes" = "$own" ] &&
    [ "$control" = refused ]; then
    pass "before $envfile exists, my-exporter (EnvironmentFile=-$envfile) starts with its own attributes alone: $attributes; a unit with EnvironmentFile=$envfile (no '-') fails to start"
else
    fail "before $envfile exists: my-exporter $(ct systemctl is-active my-exporter.service || true), start $starts, OTEL_RESOURCE_ATTRIBUTES '$attributes' (expected '$own'); the control without '-': $control"
fi

# b. geoattrd writes the file: the consumer is restarted and sees geoattrd's attributes after its own.
ct systemctl enable --now geoattrd-env-restart@my-exporter.service.path 2>/dev/null || true
config=$root/etc/geoattrd/geoattrd.yaml
# At exact, the coordinates: what the reload below changes. (log: has a level: too.)
sed -i -e 's|^  env_file: ""$|  env_file: /run/geoattrd/geo.env|' -e '/^outputs:$/,/^[a-z]/s|^  level: [a-z]*$|  level: exact|' "$config"
[ "$(grep -c -E '^  (env_file: /run/geoattrd/geo.env|level: exact)$' "$config")" = 2 ] ||
    fail "the package's geoattrd.yaml has no lines '  env_file: \"\"' and '  level: ...' to set outputs.env_file and outputs.level exact in"
ct systemctl restart geoattrd.service || true
ct timeout 60 geoattrctl refresh --wait 30 >/dev/null 2>&1 || true
for _ in $(seq 50); do ct test -f "$envfile" && break; sleep 0.2; done
geo=$(env_geo)
starts=$(starts_reach 2)
restarter_idle
starts=$(ct cat /run/my-exporter/starts 2>/dev/null || echo 0)
attributes=$(ct cat /run/my-exporter/attributes 2>/dev/null || true)
if [[ $geo == *geo.location.lat=* ]] && [ "$starts" = 2 ] && [ "$attributes" = "$own,$geo" ]; then
    pass "geoattrd wrote $envfile; geoattrd-env-restart@my-exporter.service.path restarted my-exporter once (start 2), which sees its own attributes and then geoattrd's: $attributes"
else
    fail "after geoattrd wrote $envfile ('$geo'): my-exporter start $starts (expected 2), OTEL_RESOURCE_ATTRIBUTES '$attributes' (expected '$own,$geo')"
fi
# What the drop-in works around: a variable from EnvironmentFile= replaces the same one from Environment=.
both=$(ct systemd-run --quiet --collect --wait --pipe -p Environment=OTEL_RESOURCE_ATTRIBUTES="$own" -p EnvironmentFile=-"$envfile" \
    /usr/bin/printenv OTEL_RESOURCE_ATTRIBUTES 2>&1 || true)
if [ -n "$geo" ] && [ "$both" = "$geo" ]; then
    pass "a unit with Environment=OTEL_RESOURCE_ATTRIBUTES=... and EnvironmentFile=-$envfile gets the file's value alone (hence the drop-in's SERVICE_RESOURCE_ATTRIBUTES)"
else
    fail "a unit with Environment=OTEL_RESOURCE_ATTRIBUTES=$own and EnvironmentFile=-$envfile got '$both', expected the file's '$geo'"
fi

# c. A reload that changes what the file carries: the consumer is restarted again.
sed -i -e 's|^  level: exact$|  level: locality|' -e 's|^  # decimals: 2$|  decimals: 2|' "$config"
[ "$(grep -c -E '^  (level: locality|decimals: 2)$' "$config")" = 2 ] ||
    fail "the package's geoattrd.yaml has no lines '  level: exact' and '  # decimals: 2' to set outputs.level locality/2 in"
ct systemctl reload geoattrd.service || true
geo2=$geo
for _ in $(seq 50); do
    geo2=$(env_geo)
    [ "$geo2" != "$geo" ] && break
    sleep 0.2
done
starts=$(starts_reach 3)
restarter_idle
starts=$(ct cat /run/my-exporter/starts 2>/dev/null || echo 0)
attributes=$(ct cat /run/my-exporter/attributes 2>/dev/null || true)
if [[ $geo2 == *geo.location.lat=47.38,* ]] && [ "$starts" = 3 ] && [ "$attributes" = "$own,$geo2" ]; then
    pass "systemctl reload geoattrd at outputs.level locality/2 rewrote $envfile ($geo2): my-exporter restarted (start 3) and sees $attributes"
else
    fail "after the reload to locality/2: $envfile '$geo2', my-exporter start $starts (expected 3), OTEL_RESOURCE_ATTRIBUTES '$attributes' (expected '$own,$geo2')"
fi

# d. The same content rewritten (a forced fix at the same place): the restart service runs, restarts nothing.
invocation=$(ct systemctl show -p InvocationID --value "$restarter")
ct timeout 60 geoattrctl refresh --wait 30 >/dev/null 2>&1 || true
for _ in $(seq 50); do
    [ "$(ct systemctl show -p InvocationID --value "$restarter")" != "$invocation" ] && break
    sleep 0.2
done
restarter_idle
ran=$(ct systemctl show -p InvocationID --value "$restarter")
result=$(ct systemctl show -p Result --value "$restarter")
starts=$(ct cat /run/my-exporter/starts 2>/dev/null || echo 0)
if [ "$ran" != "$invocation" ] && [ "$result" = success ] && [ "$starts" = 3 ] && [ "$(env_geo)" = "$geo2" ]; then
    pass "a forced fix rewrote $envfile with the same attributes: $restarter ran (Result=$result) and restarted nothing (still start 3)"
else
    fail "after a forced fix at the same place: $restarter $([ "$ran" != "$invocation" ] && echo ran || echo "did not run"), Result=$result; my-exporter start $starts (expected 3)"
fi
info "the Collector recipe's checks took $((SECONDS - recipe_started)) s"

# --- 11. Prometheus: /metrics alone on loopback TCP ------------------------------------------------
# As docs/operating.md says: geoattrd-metrics.socket (the metrics socket, passed to geoattrd when
# it starts) and geoattrd-metrics-proxy.socket (127.0.0.1, relayed by systemd-socket-proxyd to the
# metrics socket) enabled and started while geoattrd is stopped; from the container's loopback,
# the first scrape starts geoattrd, /metrics answers and nothing else does.
# container_http_as USER METHOD URL [BODY]: the status, a tab and the body of a request made inside
# the container as USER (python3: the tree has no curl); "error<TAB>why" when there is no answer.
container_http_as() {
    local user=$1
    shift
    ct runuser -u "$user" -- python3 - "$@" <<'PY'
import sys, urllib.error, urllib.request
method, url = sys.argv[1], sys.argv[2]
data = sys.argv[3].encode() if len(sys.argv) > 3 else None
try:
    with urllib.request.urlopen(urllib.request.Request(url, data=data, method=method), timeout=20) as answer:
        status, body = answer.status, answer.read()
except urllib.error.HTTPError as error:
    status, body = error.code, error.read()
except OSError as error:
    print(f"error\t{error}")
    sys.exit(0)
sys.stdout.buffer.write(f"{status}\t".encode() + body)
PY
}
# container_http METHOD URL [BODY]: the same, as root.
container_http() { container_http_as root "$@"; }
prometheus_scrape_checks() {
    local started=$SECONDS got listen port answer status body refused=() pid log relay_pid netns method target payload
    # systemd starts no socket whose service runs: geoattrd stops first, and the first scrape
    # starts it again with both sockets.
    ct systemctl enable geoattrd-metrics.socket geoattrd-metrics-proxy.socket 2>/dev/null || true
    ct systemctl stop geoattrd.service || true
    ct systemctl start geoattrd-metrics.socket geoattrd-metrics-proxy.socket || true
    listen=$(ct systemctl show -p Listen --value geoattrd-metrics-proxy.socket)
    port=${listen#127.0.0.1:}
    port=${port%% *}
    got="$(ct systemctl is-active geoattrd-metrics.socket geoattrd-metrics-proxy.socket geoattrd.service | paste -sd ' ' || true);"
    got+=$(ct stat -c '%U:%G %a %F' /run/geoattrd/metrics.sock 2>&1 || true)
    answer=$(container_http GET "http://127.0.0.1:$port/metrics")
    pid=$(ct systemctl show -p MainPID --value geoattrd.service)
    log=$( [ "${pid:-0}" != 0 ] && ct journalctl -q -o cat --no-pager _PID="$pid" || true)
    if [ "$got" = "active active inactive;geoattrd:geoattrd 666 socket" ] && grep -q 'using the metrics socket passed by systemd' <<<"$log"; then
        pass "geoattrd-metrics.socket and geoattrd-metrics-proxy.socket ($listen) active, /run/geoattrd/metrics.sock geoattrd:geoattrd 0666, geoattrd stopped; the first scrape started geoattrd, which took the metrics socket from systemd"
    else
        fail "the metrics sockets and geoattrd before the first scrape: '$got' (expected active active inactive;geoattrd:geoattrd 666 socket), Listen=$listen; geoattrd's log after it:"
        tail -n 20 <<<"$log" | indent
    fi
    status=${answer%%$'\t'*} body=${answer#*$'\t'}
    if [ "$status" = 200 ] && grep -q '^# HELP geoattrd_fixes_total ' <<<"$body" && grep -q '^geoattrd_build_info{' <<<"$body"; then
        pass "GET http://127.0.0.1:$port/metrics from the container's loopback: 200, $(grep -c '^# TYPE geoattrd_' <<<"$body") geoattrd_ families"
    else
        fail "GET http://127.0.0.1:$port/metrics: status '$status', body: $(head -c 300 <<<"$body")"
    fi
    for request in "GET /v1/attributes" "GET /v1/attributes?format=prometheus" "GET /v1/status" "GET /v1/watch" \
        "POST /v1/refresh" "PUT /v1/state background" "GET /"; do
        read -r method target payload <<<"$request"
        answer=$(container_http "$method" "http://127.0.0.1:$port$target" ${payload:+"$payload"})
        [ "${answer%%$'\t'*}" = 404 ] || refused+=("$method $target: ${answer:0:200}")
    done
    if [ ${#refused[@]} -eq 0 ] && [ "$(daemon_state)" = foreground ]; then
        pass "through 127.0.0.1:$port everything else is 404: /v1/attributes (also ?format=prometheus), /v1/status, /v1/watch, POST /v1/refresh, PUT /v1/state, /; geoattrd still in the foreground"
    else
        fail "through 127.0.0.1:$port: ${refused[*]:-all 404}; geoattrd reports $(daemon_state)"
    fi
    relay_pid=$(ct systemctl show -p MainPID --value geoattrd-metrics-proxy.service)
    netns=$( [ "${relay_pid:-0}" != 0 ] && ct nsenter -t "$relay_pid" -n ip -br addr | awk '{ print $1 }' | paste -sd ' ' || true)
    got="$(ct systemctl show -p ActiveState --value geoattrd-metrics-proxy.service) $(ct systemctl show -p Result --value geoattrd-metrics-proxy.service)"
    got+=" $(ct systemctl show -p DynamicUser --value geoattrd-metrics-proxy.service)"
    if [ "$got" = "active success yes" ] && [ "$netns" = lo ]; then
        pass "geoattrd-metrics-proxy.service: active, Result=success, a dynamic user, its network lo only"
    else
        fail "geoattrd-metrics-proxy.service: ActiveState Result DynamicUser '$got', its network '$netns'"
    fi
    ct systemd-analyze security geoattrd-metrics-proxy.service 2>&1 | sed -n 's/^→ \(Overall exposure level.*\)/\1/p' |
        while read -r line; do info "systemd-analyze security (online): $line"; done || true
    info "the /metrics-over-TCP checks took $((SECONDS - started)) s"
}
prometheus_scrape_checks

# --- 12. Prometheus: node_exporter's textfile collector ---------------------------------------------
# As docs/operating.md says: Debian's prometheus-node-exporter (1.5, user prometheus) joins
# geoattr-metrics and reads /run/geoattrd/textfile/geoattrd.prom through a link in its default
# directory; geoattrd writes the file there (outputs.prometheus_file, outputs.mode 0640). Its
# scrape carries the location; prometheus can read the file but write nothing there; a client
# outside the group cannot read it; the layout holds across a restart.
prometheus_textfile_checks() {
    local started=$SECONDS yaml=$root/etc/geoattrd/geoattrd.yaml textfile=/run/geoattrd/textfile/geoattrd.prom got body log
    local wrote=() expected="geoattrd:geoattr-metrics 2750 directory;geoattrd:geoattr-metrics 640 regular file"
    ct usermod -aG geoattr-metrics prometheus || fail "usermod -aG geoattr-metrics prometheus failed"
    ct ln -sf "$textfile" /var/lib/prometheus/node-exporter/geoattrd.prom || fail "no link in /var/lib/prometheus/node-exporter"
    # The socket's mode is "0660": only the outputs' can be "0640" or "0644".
    sed -i -e "s|^  prometheus_file: \"\"\$|  prometheus_file: $textfile|" -e 's|^  mode: "064[04]"$|  mode: "0640"|' "$yaml"
    [ "$(grep -c -E "^  (prometheus_file: $textfile|mode: \"0640\")\$" "$yaml")" = 2 ] ||
        fail "the package's geoattrd.yaml has no lines '  prometheus_file: \"\"' and '  mode: \"0640\"' (or \"0644\") to set the textfile in"
    ct systemctl restart geoattrd.service || true
    ct timeout 60 geoattrctl refresh --wait 30 >/dev/null 2>&1 || true
    for _ in $(seq 50); do ct test -f "$textfile" && break; sleep 0.2; done
    got=$(ct stat -c '%U:%G %a %F' /run/geoattrd/textfile "$textfile" 2>&1 | paste -sd ';' || true)
    if [ "$got" = "$expected" ]; then
        pass "geoattrd wrote $textfile: /run/geoattrd/textfile geoattrd:geoattr-metrics 2750, the file geoattrd:geoattr-metrics 0640 (the directory's group; geoattrd is not in it)"
    else
        fail "the textfile layout: '$got', expected '$expected'"
    fi
    ct systemctl start prometheus-node-exporter.service || true
    for _ in $(seq 50); do [ -n "$(ct ss -Hltn 'sport = :9100' || true)" ] && break; sleep 0.2; done
    body=$(container_http GET http://127.0.0.1:9100/metrics)
    if [[ ${body%%$'\t'*} == 200 ]] && grep -q '^geoattrd_location_info[{ ]' <<<"$body" &&
        grep -q '^geoattrd_location_updated_timestamp_seconds ' <<<"$body" && grep -q '^node_textfile_scrape_error 0$' <<<"$body"; then
        pass "node_exporter $(ct prometheus-node-exporter --version 2>&1 | sed -n '1s/.*version \([0-9.]*\).*/\1/p') (user prometheus, group geoattr-metrics, the link in /var/lib/prometheus/node-exporter): http://127.0.0.1:9100/metrics carries geoattrd_location_info and geoattrd_location_updated_timestamp_seconds, node_textfile_scrape_error 0"
    else
        fail "node_exporter's http://127.0.0.1:9100/metrics: $(grep -E '^(geoattrd_|node_textfile)' <<<"$body" | head -n 8 | paste -sd ';' || true) (status ${body%%$'\t'*}); its journal:"
        { ct journalctl -q -o cat --no-pager -u prometheus-node-exporter.service || true; } | tail -n 10 | indent
    fi
    ct_as prometheus touch /run/geoattrd/textfile/planted.prom 2>/dev/null && wrote+=("created a file")
    ct_as prometheus sh -c "echo planted >> $textfile" 2>/dev/null && wrote+=("appended to the file")
    ct_as prometheus mv "$textfile" /run/geoattrd/textfile/aside.prom 2>/dev/null && wrote+=("moved the file")
    ct_as prometheus rm -f "$textfile" 2>/dev/null && wrote+=("removed the file")
    if [ ${#wrote[@]} -eq 0 ] && ct_as prometheus grep -q '^geoattrd_location_info' "$textfile" &&
        ! ct_as client1 cat "$textfile" >/dev/null 2>&1 && ! ct_as client1 ls /run/geoattrd/textfile >/dev/null 2>&1; then
        pass "prometheus reads $textfile but cannot create, append, move or remove anything there; client1 (not in geoattr-metrics) can neither read the file nor list the directory"
    else
        fail "prometheus and the textfile: ${wrote[*]:-wrote nothing}; or prometheus could not read it, or client1 could"
    fi
    ct systemctl restart geoattrd.service || true
    ct timeout 60 geoattrctl refresh --wait 30 >/dev/null 2>&1 || true
    got=$(ct stat -c '%U:%G %a %F' /run/geoattrd/textfile "$textfile" 2>&1 | paste -sd ';' || true)
    body=$(container_http GET http://127.0.0.1:9100/metrics)
    log=$(ct journalctl -q -o cat --no-pager -u geoattrd.service || true)
    if [ "$got" = "$expected" ] && grep -q '^geoattrd_location_info[{ ]' <<<"$body" && ! grep -q 'output file not written' <<<"$log"; then
        pass "after systemctl restart geoattrd and a fix: the textfile layout is the same (RuntimeDirectory= left it alone) and node_exporter still carries the location; no 'output file not written'"
    else
        fail "after the restart: the textfile layout '$got' (expected '$expected'), or node_exporter lost the location, or geoattrd logged 'output file not written'"
    fi
    info "the textfile checks took $((SECONDS - started)) s"
}
prometheus_textfile_checks
if [ "$failures" -gt 0 ]; then
    echo "--- for the failures above: the Prometheus units' status and journals"
    ct systemctl status --no-pager --lines=0 geoattrd-metrics.socket geoattrd-metrics-proxy.socket geoattrd-metrics-proxy.service \
        prometheus-node-exporter.service 2>&1 | indent || true
    ct journalctl -q --no-pager -o short-monotonic -u geoattrd-metrics.socket -u geoattrd-metrics-proxy.socket \
        -u geoattrd-metrics-proxy.service -u prometheus-node-exporter.service 2>&1 | tail -n 60 | indent || true
fi

# --- 13. The env format under systemd's EnvironmentFile= -----------------------------------------
# One unit reads every value: the escaping corpus's env file (geoattrd's encoder, variables
# T_V0 ...) as EnvironmentFile=, its environment dumped NUL-separated by env -0 and compared, on
# the host, byte for byte with the values the corpus says an environment carries.
env_format_checks() {
    local corpus=$run/escaping tool=${ESCAPING_CORPUS:-} count differ
    if [ -z "$tool" ]; then
        if ! swift build --product escaping-corpus >"$run/escaping-build.log" 2>&1; then
            fail "the env format under EnvironmentFile=: swift build --product escaping-corpus failed:"
            tail -n 20 "$run/escaping-build.log" | indent
            return
        fi
        tool=$(swift build --show-bin-path)/escaping-corpus
    fi
    if ! "$tool" "$corpus" 400 >"$run/escaping.log" 2>&1; then
        fail "the env format under EnvironmentFile=: $tool failed: $(cat "$run/escaping.log")"
        return
    fi
    cp "$corpus/geo.env" "$root/root/escaping.env"
    ct systemd-run --quiet --collect --wait --pipe -p EnvironmentFile=/root/escaping.env /usr/bin/env -0 >"$corpus/dumped" 2>"$corpus/dump.err" || true
    LC_ALL=C grep -a -z '^T_V[0-9]*=' "$corpus/dumped" | LC_ALL=C sort -z >"$corpus/got" || true
    LC_ALL=C sort -z "$corpus/env.expected" >"$corpus/expected"
    count=$(tr -cd '\0' <"$corpus/expected" | wc -c)
    if [ "$count" -gt 400 ] && cmp -s "$corpus/expected" "$corpus/got"; then
        pass "EnvironmentFile= under systemd $(ct systemctl --version | sed -n '1s/^systemd \([0-9]*\).*/\1/p'): all $count values of the escaping corpus in geoattrd's env format read back exactly"
    else
        differ=$(LC_ALL=C comm -z -3 "$corpus/expected" "$corpus/got" | tr -cd '\0' | wc -c)
        fail "EnvironmentFile=: of $count values, $differ entries differ (expected, then as systemd read them; the first 6):"
        LC_ALL=C comm -z -3 "$corpus/expected" "$corpus/got" | head -z -n 6 | tr '\0' '\n' | cat -v | indent
        if [ -s "$corpus/dump.err" ]; then indent <"$corpus/dump.err"; fi
        ct journalctl -q -b --no-pager -o cat | grep -F /root/escaping.env | tail -n 3 | indent || true
    fi
}
env_format_checks

# The package's geoattrd.yaml as shipped (the installed one is a conffile, edited by the sections
# above), and a helper that sets keys of one of its sections.
dpkg-deb --fsys-tarfile "$deb" | tar -xO ./etc/geoattrd/geoattrd.yaml >"$run/geoattrd.yaml.dist"
# yaml_set CONFIG SECTION LINES: sets in SECTION of CONFIG each "key: value" of LINES (a
# "SECTION:" line, comments and blank lines skipped), over the key's line or its commented-out
# example; prints "key: value" for each, and fails naming a key the section does not have.
yaml_set() {
    python3 - "$@" <<'PY'
import re, sys
path, section, given = sys.argv[1:4]
wanted = []
for line in given.split("\n"):
    line = re.sub(r"\s+#.*$", "", line).rstrip()
    match = re.match(r"^\s*([a-z_]+):\s*(.*)$", line)
    if not match or (match.group(1) == section and not match.group(2)):
        continue
    wanted.append((match.group(1), match.group(2)))
lines = open(path, encoding="utf-8").read().split("\n")
current, done = None, set()
for i, line in enumerate(lines):
    header = re.match(r"^([a-z_]+):\s*$", line)
    if header:
        current = header.group(1)
        continue
    if current != section:
        continue
    for key, value in wanted:
        if key not in done and re.match(rf"^  (# )?{key}:", line):
            lines[i] = f"  {key}: {value}"
            done.add(key)
missing = [key for key, _ in wanted if key not in done]
if missing or not wanted:
    print(f"no {section}: key {' '.join(missing) or '(none given)'} in {path}", file=sys.stderr)
    sys.exit(1)
open(path, "w", encoding="utf-8").write("\n".join(lines))
for key, value in wanted:
    print(f"{key}: {value}")
PY
}

# --- 14. An upgrade over what a client planted in the old layout --------------------------------
# Section 9's group-writable /run/geoattrd, and the textfile directory group-writable as well: a
# client replaces the env file by a directory of its own holding a link to a directory of root's,
# and leaves a FIFO, a symbolic link to a file of root's and a stray file in the textfile
# directory. No restart in between: RuntimeDirectory= would re-own all of it to geoattrd.
upgrade_cleanup_checks() {
    local started=$SECONDS config=$root/etc/geoattrd/geoattrd.yaml envfile=/run/geoattrd/geo.env textfile=/run/geoattrd/textfile
    local planted=() left=() upgrade targets got log pid
    yaml_set "$config" outputs "env_file: $envfile" >/dev/null ||
        fail "the installed geoattrd.yaml has no outputs.env_file to set"
    ct sh -c 'printf secret >/root/victim14 && chmod 0600 /root/victim14 &&
        mkdir -p /root/victimdir14 && printf kept >/root/victimdir14/kept && chmod 0700 /root/victimdir14'
    ct chgrp geoattr /run/geoattrd "$textfile"
    ct chmod 0770 /run/geoattrd
    ct chmod 2770 "$textfile"
    ct_as client1 sh -c "rm -f $envfile && mkdir $envfile && ln -s /root/victimdir14 $envfile/through" &&
        planted+=("a directory at $envfile")
    ct_as client1 mkfifo /run/geoattrd/planted.fifo && planted+=("a FIFO")
    ct_as client1 ln -s /root/victim14 /run/geoattrd/planted.link && planted+=("a symbolic link")
    ct_as client1 sh -c "echo 'geoattrd_location_info{geo_locality_name=\"elsewhere\"} 1' >$textfile/planted.prom" &&
        planted+=("a stray file in $textfile")
    if [ ${#planted[@]} -ne 4 ]; then
        fail "the old layout: client1 planted only ${planted[*]:-nothing} of a directory at $envfile, a FIFO, a symbolic link, a stray file in $textfile"
        return
    fi
    cp "$deb" "$root/root/$deb_name"
    # Enabled, as docs/operating.md and the Collector recipe have it, so that it runs without a client.
    ct systemctl enable geoattrd.service >/dev/null 2>&1 || true
    if ! upgrade=$(ct dpkg -i "/root/$deb_name" 2>&1); then
        fail "dpkg -i over the client's objects failed:"
        printf '%s\n' "$upgrade" | indent
        return
    fi
    running=$(ct systemctl is-active geoattrd.service || true)
    if [ "$running" = active ]; then
        pass "dpkg -i with geoattrd.service enabled: the service runs again at once, before any client connects"
    else
        fail "dpkg -i with geoattrd.service enabled left it $running"
    fi
    [ "$(ct stat -c %F "$envfile" 2>/dev/null || true)" = directory ] && left+=("the directory at $envfile")
    ct test -e /run/geoattrd/planted.fifo -o -L /run/geoattrd/planted.fifo && left+=("the FIFO")
    ct test -e /run/geoattrd/planted.link -o -L /run/geoattrd/planted.link && left+=("the symbolic link")
    ct test -e "$textfile/planted.prom" -o -L "$textfile/planted.prom" && left+=("the stray file")
    targets="$(ct stat -c '%U:%G %a' /root/victim14 || true) $(ct cat /root/victim14 || true);$(ct stat -c '%U:%G %a' /root/victimdir14 || true) $(ct ls /root/victimdir14 || true)"
    if [ ${#left[@]} -eq 0 ] && [ "$targets" = "root:root 600 secret;root:root 700 kept" ]; then
        pass "dpkg -i over the old layout removed what client1 planted (${planted[*]}), following none: the links' targets unchanged; dpkg said $(grep -c '^geoattrd: removing ' <<<"$upgrade" || true) 'geoattrd: removing' line(s)"
    else
        fail "dpkg -i over the old layout left ${left[*]:-nothing}; the links' targets: '$targets' (expected 'root:root 600 secret;root:root 700 kept'); dpkg said:"
        printf '%s\n' "$upgrade" | indent
    fi
    # The next start (a client's request), then a fix: the env file is written where the directory was.
    ct_as client1 timeout 30 geoattrctl get >/dev/null 2>&1 || true
    ct timeout 60 geoattrctl refresh --wait 30 >/dev/null 2>&1 || true
    for _ in $(seq 50); do [ "$(ct stat -c %F "$envfile" 2>/dev/null || true)" = "regular file" ] && break; sleep 0.2; done
    pid=$(ct systemctl show -p MainPID --value geoattrd.service)
    log=$( [ "${pid:-0}" != 0 ] && ct journalctl -q -o cat --no-pager _PID="$pid" || true)
    got="$(ct stat -c '%U %F' "$envfile" 2>&1 || true);$(ct stat -c '%U:%G %a' "$textfile" 2>&1 || true) $(ct ls -A "$textfile" 2>&1 | paste -sd ' ' || true)"
    if [ "$got" = "geoattrd regular file;geoattrd:geoattr-metrics 2750 geoattrd.prom" ] &&
        ct grep -q '^OTEL_RESOURCE_ATTRIBUTES=' "$envfile" && ! grep -q 'output file not written' <<<"$log"; then
        pass "after the upgrade and the next start geoattrd writes $envfile (a regular file of its own) and the textfile directory holds its geoattrd.prom alone (geoattrd:geoattr-metrics 2750); no 'output file not written'"
    else
        fail "after the upgrade and the next start: '$got' (expected 'geoattrd regular file;geoattrd:geoattr-metrics 2750 geoattrd.prom'); geoattrd's log:"
        { grep -E 'output|warning' <<<"$log" || true; } | tail -n 10 | indent
    fi
    layout_checks "after the upgrade over a client's objects and the next start"
    info "the upgrade-over-planted-objects checks took $((SECONDS - started)) s"
}
upgrade_cleanup_checks

# --- 15. The recipes, as written, and who reads what they publish ----------------------------------
# Each recipe from the package's geoattrd.yaml, its outputs: lines and commands taken from the
# documents themselves: docs/operating.md's node_exporter textfile recipe, then
# examples/collector/README.md's step 1 (the env file). After each, a user in none of geoattrd's
# groups (outsider) and a client whose access rule is none (ruled, group geoattr) try every way to
# the location: the env file, the textfile, node_exporter's port on loopback, the API.
# recipe_block FILE MARKER LANG [N]: the Nth (default first) fenced block of LANG after the first
# line of FILE holding MARKER, unindented; nothing when there is none.
recipe_block() {
    python3 - "$@" <<'PY'
import sys, textwrap
path, marker, lang = sys.argv[1:4]
wanted = int(sys.argv[4]) if len(sys.argv) > 4 else 1
lines = open(path, encoding="utf-8").read().split("\n")
start = next((i for i, line in enumerate(lines) if marker in line), None)
if start is None:
    sys.exit(0)
fence, seen, block = None, 0, []
for line in lines[start + 1:]:
    text = line.strip()
    if fence is None:
        if text.startswith("```"):
            fence = text[3:]
            seen += fence == lang
        continue
    if text == "```":
        if fence == lang and seen == wanted:
            print(textwrap.dedent("\n".join(block)))
            sys.exit(0)
        fence = None
    elif fence == lang and seen == wanted:
        block.append(line)
PY
}
# finer_than LEVEL TEXT: what TEXT (an env file, a textfile, a scrape, geoattrctl's JSON) shows
# beyond LEVEL, as words; nothing when it shows nothing more.
finer_than() {
    local rank=0 shown=()
    case $1 in country) rank=1 ;; region) rank=2 ;; locality) rank=3 ;; postal) rank=4 ;; exact) rank=5 ;; esac
    if [ "$rank" -lt 5 ] && grep -q -i -E 'geo[._]location[._](lat|lon)|geoattrd_location_(latitude|longitude)_degrees' <<<"$2"; then shown+=(coordinates); fi
    if [ "$rank" -lt 4 ] && grep -q -i -E 'geo[._]postal[._]code' <<<"$2"; then shown+=("postal code"); fi
    if [ "$rank" -lt 3 ] && grep -q -i -E 'geo[._]locality[._]name' <<<"$2"; then shown+=(locality); fi
    if [ "$rank" -lt 2 ] && grep -q -i -E 'geo[._]region[._]iso[._]code' <<<"$2"; then shown+=(region); fi
    if [ "$rank" -lt 1 ] && grep -q -i -E 'geo[._](country[._]iso[._]code|continent[._]code)' <<<"$2"; then shown+=(country); fi
    echo "${shown[*]}"
}
# reader_checks RECIPE LEVEL USER...: what each USER reads of the location, against LEVEL.
reader_checks() {
    local recipe=$1 level=$2 user file got text seen finer summary=() problems=() envfile textfile api scrape
    shift 2
    envfile=$(ct geoattrd --config /etc/geoattrd/geoattrd.yaml --check-config | sed -n 's/^outputs\.env_file = //p' || true)
    textfile=$(ct geoattrd --config /etc/geoattrd/geoattrd.yaml --check-config | sed -n 's/^outputs\.prometheus_file = //p' || true)
    for user in "$@"; do
        text= seen=()
        for file in $envfile $textfile; do
            if got=$(ct_as "$user" cat "$file" 2>/dev/null); then text+=$got$'\n' seen+=("$file read"); else seen+=("$file refused"); fi
        done
        scrape=$(container_http_as "$user" GET http://127.0.0.1:9100/metrics || true)
        case ${scrape%%$'\t'*} in
        200) text+=$(grep '^geoattrd_' <<<"${scrape#*$'\t'}" || true)$'\n' seen+=(":9100 $(grep -c '^geoattrd_location' <<<"${scrape#*$'\t'}" || true) geoattrd_location lines") ;;
        *) seen+=(":9100 ${scrape:0:60}") ;;
        esac
        if api=$(ct_as "$user" timeout 20 geoattrctl get 2>&1); then
            text+=$api$'\n' seen+=("the API $(grep -o -E '"geo\.[a-z_.]*"' <<<"$api" | sort -u | paste -sd ',' || true)")
            if [ "$user" = ruled ] && [ -n "$(finer_than none "$api")" ]; then problems+=("ruled (none) got from the API: $(finer_than none "$api")"); fi
        else
            seen+=("the API refused")
        fi
        finer=$(finer_than "$level" "$text")
        [ -z "$finer" ] || problems+=("$user read $finer, finer than $level")
        summary+=("$user: $(IFS=';'; echo "${seen[*]}" | sed 's/;/, /g')")
    done
    if [ ${#problems[@]} -eq 0 ]; then
        pass "$recipe at outputs.level $level: nothing finer reaches $(IFS=';'; echo "${summary[*]}" | sed 's/;/; /g')"
    else
        fail "$recipe at outputs.level $level: $(IFS=';'; echo "${problems[*]}" | sed 's/;/; /g'); what each got: $(IFS=';'; echo "${summary[*]}" | sed 's/;/; /g')"
    fi
}
recipe_checks() {
    local started=$SECONDS config=$root/etc/geoattrd/geoattrd.yaml yaml listen commands set level ruled_uid got
    ct useradd --no-create-home --shell /usr/sbin/nologin outsider
    ct useradd --no-create-home --shell /usr/sbin/nologin --groups geoattr ruled
    ruled_uid=$(ct id -u ruled)
    # a. docs/operating.md: node_exporter's textfile collector.
    cp "$run/geoattrd.yaml.dist" "$config"
    yaml_set "$config" access "rules: [\"uid:$ruled_uid=none\"]" >/dev/null || fail "the package's geoattrd.yaml has no access.rules"
    yaml=$(recipe_block docs/operating.md "**The location through node_exporter's textfile collector.**" yaml)
    listen=$(recipe_block docs/operating.md "**The location through node_exporter's textfile collector.**" sh 1)
    commands=$(recipe_block docs/operating.md "Then, for Debian's \`prometheus-node-exporter\`" sh)
    if ! set=$(yaml_set "$config" outputs "$yaml" 2>&1) || [[ $listen != ARGS=* ]] || [ -z "$commands" ]; then
        fail "docs/operating.md's textfile recipe: no outputs: block to apply ($set), ARGS line ('$listen') or commands"
    else
        sed -i '/^ARGS=/d' "$root/etc/default/prometheus-node-exporter"
        printf '%s\n' "$listen" >>"$root/etc/default/prometheus-node-exporter"
        # The link from section 12 goes: the recipe makes it.
        ct rm -f /var/lib/prometheus/node-exporter/geoattrd.prom
        ct sh -ec "$commands" >"$run/recipe.log" 2>&1 || { fail "the textfile recipe's commands failed:"; indent <"$run/recipe.log"; }
        ct timeout 60 geoattrctl refresh --wait 30 >/dev/null 2>&1 || true
        for _ in $(seq 50); do [ -n "$(ct ss -Hltn 'sport = :9100' || true)" ] && break; sleep 0.2; done
        level=$(ct geoattrd --config /etc/geoattrd/geoattrd.yaml --check-config | sed -n 's/^outputs\.level = //p' || true)
        got=$(container_http GET http://127.0.0.1:9100/metrics)
        info "the textfile recipe: $(paste -sd ',' <<<"$set" | sed 's/,/, /g'); $listen; node_exporter listens on $(ct ss -Hltn 'sport = :9100' | awk '{ print $4 }' | paste -sd ' ' || true); root's scrape has $(grep -c '^geoattrd_location' <<<"$got" || true) geoattrd_location lines"
        reader_checks "the textfile recipe (docs/operating.md)" "${level:-?}" outsider ruled
    fi
    # b. examples/collector/README.md, step 1: the env file, for the Collector's group.
    cp "$run/geoattrd.yaml.dist" "$config"
    yaml_set "$config" access "rules: [\"uid:$ruled_uid=none\"]" >/dev/null || true
    yaml=$(recipe_block examples/collector/README.md "**geoattrd writes the env file.**" yaml)
    commands=$(recipe_block examples/collector/README.md "**geoattrd writes the env file.**" sh)
    if ! set=$(yaml_set "$config" outputs "$yaml" 2>&1) || [ -z "$commands" ]; then
        fail "examples/collector/README.md's step 1: no outputs: lines to apply ($set) or commands"
    else
        # What the otelcol-contrib package would have made: its group.
        ct groupadd --system otelcol-contrib 2>/dev/null || true
        ct sh -ec "$commands" >"$run/recipe.log" 2>&1 || { fail "step 1's commands failed:"; indent <"$run/recipe.log"; }
        ct timeout 60 geoattrctl refresh --wait 30 >/dev/null 2>&1 || true
        level=$(ct geoattrd --config /etc/geoattrd/geoattrd.yaml --check-config | sed -n 's/^outputs\.level = //p' || true)
        envfile=$(ct geoattrd --config /etc/geoattrd/geoattrd.yaml --check-config | sed -n 's/^outputs\.env_file = //p' || true)
        for _ in $(seq 50); do ct test -f "$envfile" && break; sleep 0.2; done
        info "the Collector recipe's step 1: $(paste -sd ',' <<<"$set" | sed 's/,/, /g'); $envfile is $(ct stat -c '%U:%G %a' "$envfile" 2>&1 || true)"
        reader_checks "the Collector recipe's env file (examples/collector)" "${level:-?}" outsider ruled
    fi
    info "the recipes' checks took $((SECONDS - started)) s"
}
recipe_checks

# --- 16. Scraping while a local user holds idle connections ---------------------------------------
# outsider holds 512 connections to the relay (twice its limit): the odd ones idle after one
# answered request (a keep-alive), the even ones silent; none is opened again once closed. A
# scraper retrying for up to 30 s must get its 200 meanwhile.
# tally WORD...: each distinct word with its count, "WORD xN, ..."
tally() {
    [ $# -gt 0 ] || return 0
    printf '%s\n' "$@" | sort | uniq -c | awk '{ printf "%s%s x%s", sep, $2, $1; sep = ", " }'
}
idle_connection_checks() {
    local started=$SECONDS listen port opened held held_first answer took tries=0 refusals=() scraped=
    listen=$(ct systemctl show -p Listen --value geoattrd-metrics-proxy.socket)
    port=${listen#127.0.0.1:}
    port=${port%% *}
    cat >"$root/usr/local/bin/hold-connections" <<'PY'
#!/usr/bin/python3
# hold-connections PORT N STATUS: N connections to 127.0.0.1:PORT, as said above; writes
# "opened held" to STATUS each half second.
import os, selectors, socket, sys
port, count, status = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
selector = selectors.DefaultSelector()
opened = 0
for i in range(count):
    connection = socket.socket()
    try:
        connection.connect(("127.0.0.1", port))
        if i % 2:
            connection.sendall(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    except OSError:
        pass
    opened += 1
    connection.setblocking(False)
    selector.register(connection, selectors.EVENT_READ)
while True:
    for key, _ in selector.select(timeout=0.5):
        try:
            data = key.fileobj.recv(65536)
        except OSError:
            data = b""
        if not data:
            selector.unregister(key.fileobj)
            key.fileobj.close()
    with open(status + ".new", "w") as out:
        out.write(f"{opened} {len(selector.get_map())}\n")
    os.replace(status + ".new", status)
PY
    chmod 0755 "$root/usr/local/bin/hold-connections"
    # A control first: the relay and geoattrd answer.
    answer=$(container_http GET "http://127.0.0.1:$port/metrics")
    if [ "${answer%%$'\t'*}" != 200 ]; then
        fail "scraping under idle connections: http://127.0.0.1:$port/metrics answers '${answer:0:100}' before any is held"
        return
    fi
    ct rm -f /tmp/held
    if ! ct systemd-run --quiet --collect --unit=systemd-test-hold -p User=outsider -p LimitNOFILE=2048 \
        /usr/local/bin/hold-connections "$port" 512 /tmp/held; then
        fail "scraping under idle connections: the holder (systemd-run as outsider) did not start"
        return
    fi
    for _ in $(seq 100); do
        read -r opened held < <(ct cat /tmp/held 2>/dev/null || echo "0 0")
        [ "$opened" = 512 ] && break
        sleep 0.1
    done
    held_first=$held took=$SECONDS
    while [ $((SECONDS - took)) -lt 30 ]; do
        tries=$((tries + 1))
        answer=$(ct timeout 10 python3 -c '
import sys, urllib.error, urllib.request
try:
    with urllib.request.urlopen(sys.argv[1], timeout=5) as answer:
        print(answer.status)
except urllib.error.HTTPError as error:
    print(error.code)
except Exception as error:
    print(type(error).__name__)' "http://127.0.0.1:$port/metrics" 2>&1 || echo timeout)
        if [ "$answer" = 200 ]; then
            scraped=$((SECONDS - took))
            break
        fi
        refusals+=("$answer")
        sleep 0.5
    done
    read -r opened held < <(ct cat /tmp/held 2>/dev/null || echo "0 0")
    ct systemctl stop systemd-test-hold 2>/dev/null || true
    if [ -n "$scraped" ]; then
        pass "while outsider held idle connections to 127.0.0.1:$port ($opened opened, half idle after a request, half silent, none opened again; $held_first still open when the scraping began, $held at its 200): GET /metrics answered 200 after ${scraped} s, at try $tries${refusals[*]:+ (before it: $(tally "${refusals[@]}"))}"
    else
        fail "while outsider held idle connections to 127.0.0.1:$port ($opened opened; $held_first still open when the scraping began, $held after it): no 200 in 30 s of $tries tries: $(tally "${refusals[@]}")"
        ct journalctl -q -o cat --no-pager -u geoattrd-metrics-proxy.service | sort | uniq -c | sort -rn | head -n 5 | indent || true
    fi
    info "the relay refused $(ct journalctl -q -o cat --no-pager -u geoattrd-metrics-proxy.service | grep -c 'Hit connection limit' || true) connection(s) at its limit; the idle-connection checks took $((SECONDS - started)) s"
}
idle_connection_checks

# --- 17. gpsd's guard ----------------------------------------------------------------------------
gpsd_guard_checks() {
    local started=$SECONDS before after root_after relay_after named doctor_before doctor_after pid through tables
    # What a gpsd client gets on 127.0.0.1:2947 as USER: "reports" (gpsd's VERSION greeting),
    # "reset" or another failure.
    gpsd_as() {
        ct runuser -u "$1" -- python3 -c '
import socket
try:
    s = socket.create_connection(("127.0.0.1", 2947), timeout=3)
    s.settimeout(3)
    print("reports" if b"VERSION" in s.recv(4096) else "silent")
except ConnectionRefusedError:
    print("refused")
except OSError as error:
    print(type(error).__name__)' 2>&1 || echo "error"
    }
    before=$(gpsd_as outsider)
    doctor_before=$(ct timeout 60 geoattrctl doctor --gpsd 127.0.0.1:2947 --timeout 20 2>&1 | grep 'gpsd access' || true)
    if [ "$before" = reports ] && [[ $doctor_before == *"[warn] gpsd access: any local user reaches gpsd"* ]]; then
        pass "without the guard gpsd serves outsider (a user in no group) on 127.0.0.1:2947, and doctor says: ${doctor_before#*: }"
    else
        fail "without the guard: outsider got '$before' from gpsd; doctor said '${doctor_before:-nothing}'"
    fi
    if ! ct systemctl start geoattrd-gpsd-guard.service; then
        fail "systemctl start geoattrd-gpsd-guard.service failed"
        ct journalctl -q -o cat --no-pager -u geoattrd-gpsd-guard.service | indent || true
        return
    fi
    after=$(gpsd_as outsider)
    root_after=$(gpsd_as root)
    relay_after=$(gpsd_as geoattrd-gpsd)
    doctor_after=$(ct timeout 60 geoattrctl doctor --gpsd 127.0.0.1:2947 --timeout 20 2>&1 | grep 'gpsd access' || true)
    # geoattrd's own way: its namespace's 127.0.0.1:2947 is the relay's socket, and the relay
    # connects to gpsd as geoattrd-gpsd.
    ct systemctl start geoattrd.service || true
    pid=$(ct systemctl show -p MainPID --value geoattrd.service)
    through=$(ct nsenter -t "$pid" -n python3 -c '
import socket
s = socket.create_connection(("127.0.0.1", 2947), timeout=5)
s.settimeout(5)
print("reports" if b"VERSION" in s.recv(4096) else "silent")' 2>&1 || echo "failed")
    # A reset answering the connection's first packet: refused, to the client.
    if [ "$after" = refused ] && [ "$root_after" = reports ] && [ "$relay_after" = reports ] && [ "$through" = reports ] &&
        [[ $doctor_after == *"[ok  ] gpsd access: a local user no one named (uid 65534) is refused"* ]]; then
        pass "with the guard: outsider's connection to gpsd is refused (reset); root and geoattrd-gpsd get gpsd's reports; geoattrd reaches gpsd through its relay; doctor says: ${doctor_after#*: }"
    else
        fail "with the guard: outsider '$after', root '$root_after', geoattrd-gpsd '$relay_after', through geoattrd's relay '$through'; doctor said '${doctor_after:-nothing}'"
        ct nft list ruleset 2>&1 | indent || true
    fi
    printf 'GPSD_GUARD_USERS="outsider no-such-user"\n' >"$root/etc/default/geoattrd-gpsd-guard"
    ct systemctl reload geoattrd-gpsd-guard.service || true
    named=$(gpsd_as outsider)
    if [ "$named" = reports ] && [ "$(gpsd_as ruled)" = refused ] &&
        ct journalctl -q -o cat --no-pager -u geoattrd-gpsd-guard.service | grep -q "no such user 'no-such-user'"; then
        pass "GPSD_GUARD_USERS=\"outsider no-such-user\" and a reload: outsider reaches gpsd, ruled is still refused, the unknown name is left out and said in the journal"
    else
        fail "GPSD_GUARD_USERS with outsider: outsider got '$named', ruled '$(gpsd_as ruled)'"
    fi
    rm -f "$root/etc/default/geoattrd-gpsd-guard"
    ct systemctl stop geoattrd-gpsd-guard.service || true
    tables=$(ct nft list tables 2>&1 || true)
    if [[ $tables != *geoattrd_gpsd_guard* ]] && [ "$(gpsd_as outsider)" = reports ]; then
        pass "systemctl stop geoattrd-gpsd-guard: the table is gone and gpsd serves every local user again ($((SECONDS - started)) s for the guard's checks)"
    else
        fail "after systemctl stop geoattrd-gpsd-guard: tables '$tables'"
    fi
}
gpsd_guard_checks

if [ "$failures" -gt 0 ]; then
    echo "--- for the failures above: the units' status and journals"
    ct systemctl status --no-pager --lines=0 geoattrd.socket geoattrd-gpsd.socket geoattrd.service geoattrd-gpsd.service \
        my-exporter.service geoattrd-env-restart@my-exporter.service.path geoattrd-env-restart@my-exporter.service.service 2>&1 | indent || true
    ct journalctl -q --no-pager -o short-monotonic -u geoattrd.socket -u geoattrd.service -u geoattrd-gpsd.socket \
        -u geoattrd-gpsd.service -u my-exporter.service -u 'geoattrd-env-restart@*' 2>&1 | tail -n 150 | indent || true
fi

# --- 18. The operator's walk ---------------------------------------------------------------------
# From the previous release to this one and off the device again, in a container booted afresh
# (nothing of sections 1-17 in it), as an operator does it: dpkg -i while systemd runs, the node
# exporter recipe's outputs, a reload with a typo, the troubleshooting table's rows that systemd
# can provoke, remove, purge.
# walk_updated: the textfile's geoattrd_location_updated_timestamp_seconds, empty without one.
walk_updated() { ct sed -n 's/^geoattrd_location_updated_timestamp_seconds \([0-9]*\)$/\1/p' "$1" 2>/dev/null || true; }
# walk_status FIELD: a field of geoattrctl status (as root).
walk_status() {
    ct timeout 10 geoattrctl status 2>/dev/null | python3 -c 'import json, sys; print(json.load(sys.stdin)[sys.argv[1]])' "$1" 2>/dev/null || true
}
# walk_doctor [USER]: geoattrctl doctor's rows, as USER (default root).
walk_doctor() { ct_as "${1:-root}" timeout 60 geoattrctl doctor --gpsd 127.0.0.1:2947 --timeout 20 2>&1 || true; }
# walk_moves_on LABEL TEXTFILE: a forced fix as root, then the textfile must carry a later update.
walk_moves_on() {
    local label=$1 textfile=$2 before after refreshed rc=0
    before=$(walk_updated "$textfile")
    # The timestamp counts seconds: the next fix is a second later at least.
    sleep 1
    refreshed=$(ct timeout 60 geoattrctl refresh --wait 30 2>&1) || rc=$?
    for _ in $(seq 50); do
        after=$(walk_updated "$textfile")
        [ -n "$after" ] && [ "$after" -gt "${before:-0}" ] && break
        sleep 0.2
    done
    if [ "$rc" = 0 ] && [ -n "$after" ] && [ "$after" -gt "${before:-0}" ]; then
        pass "$label: the next fix (geoattrctl refresh --wait 30 as root) moved $textfile on: geoattrd_location_updated_timestamp_seconds ${before:-none} -> $after"
    else
        fail "$label: after geoattrctl refresh --wait 30 (exit $rc: $(tail -c 200 <<<"$refreshed")) $textfile says updated ${after:-nothing}, before ${before:-nothing}"
    fi
}
# walk_install LABEL: dpkg -i of this tree's package, then the service must run again without a
# client, as this version, and the textfile move on with the next fix.
walk_install() {
    local label=$1 textfile=$2 out running pid exe version wanted
    wanted=$(dpkg-deb -f "$deb" Version)
    if ! out=$(ct dpkg -i --force-confold "/root/$deb_name" 2>&1); then
        fail "$label: dpkg -i /root/$deb_name failed:"
        indent <<<"$out"
        return
    fi
    # Before anything connects to the socket.
    running=$(ct systemctl is-active geoattrd.service || true)
    pid=$(ct systemctl show -p MainPID --value geoattrd.service)
    exe=$( [ "${pid:-0}" != 0 ] && ct readlink "/proc/$pid/exe" || true)
    version=$(ct geoattrctl --version 2>&1 || true)
    if [ "$running" = active ] && [ "$exe" = /usr/bin/geoattrd ] && [[ $version == "$wanted "* || $version == "$wanted" ]]; then
        pass "$label: dpkg -i: geoattrd.service active before any client connects (pid $pid, $exe), geoattrctl --version: $version"
    else
        fail "$label: dpkg -i: geoattrd.service $running, its program '${exe:-none}', geoattrctl --version '$version' (expected $wanted); dpkg said:"
        indent <<<"$out"
    fi
    walk_moves_on "$label" "$textfile"
}
operator_walk() {
    local started=$SECONDS config=$root/etc/geoattrd/geoattrd.yaml from installs=() out yaml set textfile took pid rc
    local status refused doctor row before after uid units left=() kept=() printed
    if [ -z "$previous" ]; then
        echo "NOTE  section 18 (the operator's walk) skipped: PREVIOUS_DEB is not set (PREVIOUS_DEB=\$(bash scripts/previous-release-deb.sh))"
        return
    fi
    from=$(dpkg-deb -f "$previous" Version)
    poweroff_container
    fresh_overlay
    write_track
    cp "$previous" "$deb" ${geodata:+"$geodata"} "$root/root/"
    echo "systemd-test: section 18, the operator's walk: a fresh boot"
    boot_container
    start_gpsd

    # 1. The previous release, the textfile recipe's outputs, enabled.
    installs=("/root/$(basename "$previous")")
    [ -z "$geodata" ] || installs+=("/root/$(basename "$geodata")")
    if ! out=$(ct dpkg -i "${installs[@]}" 2>&1); then
        fail "the walk: dpkg -i ${installs[*]#/root/} failed:"
        indent <<<"$out"
        return
    fi
    yaml=$(recipe_block docs/operating.md "**The location through node_exporter's textfile collector.**" yaml)
    textfile=$(sed -n 's/^ *prometheus_file: *\([^ ]*\).*$/\1/p' <<<"$yaml")
    if ! set=$(yaml_set "$config" outputs "$yaml" 2>&1) || [ -z "$textfile" ]; then
        fail "the walk: docs/operating.md's textfile recipe cannot be applied to $from's geoattrd.yaml: $set"
        return
    fi
    took=$SECONDS
    ct systemctl enable --now geoattrd.service >/dev/null 2>&1 || true
    for _ in $(seq 90); do
        [ -n "$(walk_updated "$textfile")" ] && break
        sleep 0.5
    done
    if [ "$(ct systemctl is-active geoattrd.service || true)" = active ] && [ -n "$(walk_updated "$textfile")" ] &&
        [[ $(ct timeout 20 geoattrctl get 2>&1 || true) == *'"geo.location.lat"'* ]]; then
        pass "geoattrd $from${geodata:+ with $(basename "$geodata")} installed, outputs as docs/operating.md's textfile recipe ($(paste -sd ',' <<<"$set" | sed 's/,/, /g')), systemctl enable --now geoattrd: the first fix after $((SECONDS - took)) s, $textfile written"
    else
        fail "geoattrd $from, enable --now: geoattrd.service $(ct systemctl is-active geoattrd.service || true), $textfile: '$(ct cat "$textfile" 2>&1 | head -c 200)'"
    fi

    # 2, 3. The upgrade, and the same package again.
    walk_install "upgrade $from -> $(dpkg-deb -f "$deb" Version)" "$textfile"
    walk_install "reinstall" "$textfile"
    # Running without being enabled (started by a client through its socket, or by hand): it runs
    # again too. The link goes by hand: `systemctl disable` would take the socket with it (Also=).
    ct rm -f /etc/systemd/system/multi-user.target.wants/geoattrd.service
    ct systemctl daemon-reload
    if [ "$(ct systemctl is-enabled geoattrd.service || true)" = disabled ] && [ "$(ct systemctl is-active geoattrd.service || true)" = active ]; then
        walk_install "reinstall, geoattrd.service running but not enabled" "$textfile"
    else
        fail "geoattrd.service could not be made running and not enabled: $(ct systemctl is-enabled geoattrd.service || true), $(ct systemctl is-active geoattrd.service || true)"
    fi
    ct systemctl enable --quiet geoattrd.service

    # 4. A reload refused for a typo, then a good one.
    pid=$(ct systemctl show -p MainPID --value geoattrd.service)
    sed -i 's/^schedule:$/schedule:\n  tll_s: 5/' "$config"
    rc=0
    out=$(ct systemctl reload geoattrd.service 2>&1) || rc=$?
    status=$(ct systemctl status geoattrd.service --no-pager --lines=20 2>&1 || true)
    if [ "$rc" != 0 ] && grep -q 'tll_s' <<<"$status"; then
        pass "schedule.tll_s (a typo) in geoattrd.yaml: systemctl reload geoattrd exits $rc, and systemctl status says: $(grep -m 1 'tll_s' <<<"$status" | sed 's/^ *//')"
    else
        fail "schedule.tll_s (a typo) in geoattrd.yaml: systemctl reload geoattrd exits $rc (expected non-zero: $(tail -c 200 <<<"$out")), systemctl status names tll_s: $(grep -c 'tll_s' <<<"$status" || true) line(s):"
        tail -n 12 <<<"$status" | indent
    fi
    if [ "$(ct systemctl is-active geoattrd.service || true)" = active ] &&
        [ "$(ct systemctl show -p MainPID --value geoattrd.service)" = "$pid" ] &&
        [[ $(ct timeout 20 geoattrctl get 2>&1 || true) == *'"geo.location.lat"'* ]]; then
        pass "after the refused reload geoattrd keeps serving: active, the same process ($pid), geoattrctl get answers"
    else
        fail "after the refused reload: geoattrd.service $(ct systemctl is-active geoattrd.service || true), pid $(ct systemctl show -p MainPID --value geoattrd.service) (was $pid), or geoattrctl get failed"
    fi
    sed -i '/^  tll_s: 5$/d' "$config"
    before=$(walk_status refresh_tokens)
    yaml_set "$config" refresh "burst: 1" >/dev/null || fail "the walk: no refresh.burst in geoattrd.yaml"
    rc=0
    out=$(ct systemctl reload geoattrd.service 2>&1) || rc=$?
    after=$(walk_status refresh_tokens)
    if [ "$rc" = 0 ] && [ "$after" = 1 ] && [ "${before:-0}" -gt 1 ]; then
        pass "the typo removed and refresh.burst 1: systemctl reload geoattrd exits 0 and the new burst is in force (refresh_tokens $before -> $after)"
    else
        fail "the typo removed and refresh.burst 1: systemctl reload geoattrd exits $rc ($(tail -c 200 <<<"$out")), refresh_tokens ${before:-?} -> ${after:-?} (expected 1)"
    fi

    # 5a. The refresh budget spent, then refresh.burst raised.
    local last=0 reloaded=0 next=0
    ct timeout 60 geoattrctl refresh --wait 30 >/dev/null 2>&1 || last=$?
    refused=$(ct timeout 20 geoattrctl refresh 2>&1 || true)
    yaml_set "$config" refresh "burst: 3" >/dev/null || true
    out=$(ct systemctl reload geoattrd.service 2>&1) || reloaded=$?
    took=$SECONDS
    ct timeout 60 geoattrctl refresh --wait 30 >/dev/null 2>&1 || next=$?
    if [ "$last$reloaded$next" = 000 ] && [[ $refused == *"429 refresh_budget_spent"* ]]; then
        pass "refresh budget: the refresh after the last token is refused ($(sed 's/^.*429/429/' <<<"$refused" | head -c 160)); refresh.burst 3 and systemctl reload: the next geoattrctl refresh --wait 30 succeeds at once ($((SECONDS - took)) s, the fix included)"
    else
        fail "refresh budget: the last token's refresh exits $last, the next says '$(head -c 200 <<<"$refused")' (429 refresh_budget_spent expected); refresh.burst 3: systemctl reload exits $reloaded ($(tail -c 160 <<<"$out")), the refresh after it $next"
    fi

    # 5b. A client refused by a uid rule, and the fix.
    ct useradd --no-create-home --shell /usr/sbin/nologin --groups geoattr walker || fail "the walk: useradd walker failed"
    uid=$(ct id -u walker)
    yaml_set "$config" access "rules: [\"uid:$uid=none\"]" >/dev/null || fail "the walk: no access.rules in geoattrd.yaml"
    ct systemctl reload geoattrd.service >/dev/null 2>&1 || true
    refused=$(ct_as walker timeout 20 geoattrctl get 2>&1 || true)
    doctor=$(walk_doctor walker)
    row=$(grep -E '^\[(ok  |warn|FAIL)\] access:' <<<"$doctor" || true)
    if [[ $refused == *"403"*"uid:$uid=none"* ]] && [[ $row == *"uid:$uid=none"* ]]; then
        pass "access.rules uid:$uid=none: walker's geoattrctl get is refused naming the rule ($(head -c 200 <<<"$refused")); doctor as walker: $(head -c 200 <<<"$row")"
    else
        fail "access.rules uid:$uid=none: walker's geoattrctl get said '$(head -c 300 <<<"$refused")'; doctor as walker's access row: '${row:-none}' (both should name uid:$uid=none)"
    fi
    yaml_set "$config" access "rules: [\"uid:$uid=locality\"]" >/dev/null || true
    rc=0
    ct systemctl reload geoattrd.service >/dev/null 2>&1 || rc=$?
    if [ "$rc" = 0 ] && ct_as walker timeout 20 geoattrctl get >/dev/null 2>&1; then
        pass "the rule changed to uid:$uid=locality and systemctl reload geoattrd: walker's geoattrctl get answers"
    else
        fail "the rule changed to uid:$uid=locality: systemctl reload exits $rc; walker's geoattrctl get: $(ct_as walker timeout 20 geoattrctl get 2>&1 | head -c 200 || true)"
    fi

    # 5c. The state file replaced by a rename as root, then tmpfiles.d.
    ct sh -c 'printf background >/run/geoattrd-state.new && mv /run/geoattrd-state.new /run/geoattrd/state' ||
        fail "the walk: root could not rename a file over /run/geoattrd/state"
    before=$(ct stat -c '%U:%G %a' /run/geoattrd/state 2>&1 || true)
    doctor=$(walk_doctor)
    row=$(grep -E '^\[(ok  |warn|FAIL)\] state file:' <<<"$doctor" | paste -sd ';' || true)
    if grep -q -E '^\[(warn|FAIL)\] state file:' <<<"$doctor"; then
        pass "the state file replaced by a rename as root ($before): doctor warns: $row"
    else
        fail "the state file replaced by a rename as root ($before): doctor's state file row: '${row:-none}' (a warning expected)"
    fi
    ct systemd-tmpfiles --create geoattrd.conf >/dev/null 2>&1 || true
    after=$(ct stat -c '%U:%G %a' /run/geoattrd/state 2>&1 || true)
    doctor=$(walk_doctor)
    row=$(grep -E '^\[(ok  |warn|FAIL)\] state file:' <<<"$doctor" | paste -sd ';' || true)
    if [ "$after" = "geoattrd:geoattr-state 660" ] && [[ $row == "[ok  ] state file:"* ]] && [[ $row != *";"* ]]; then
        pass "systemd-tmpfiles --create geoattrd.conf: the state file $after, its content kept ($(ct cat /run/geoattrd/state)); doctor: $row"
    else
        fail "after systemd-tmpfiles --create geoattrd.conf: the state file '$after', doctor's row(s) '${row:-none}'"
    fi
    ct sh -c 'echo foreground >/run/geoattrd/state' || true
    wait_state foreground >/dev/null || info "geoattrd did not report foreground again within 10 s"

    # 5d. The index package removed under the running daemon.
    if [ -n "$geodata" ]; then
        ct dpkg -r geoattrd-geodata >/dev/null 2>&1 || fail "dpkg -r geoattrd-geodata failed"
        for _ in $(seq 20); do
            [ -n "$(walk_status index_problem | grep -v '^None$')$(walk_status degraded | grep -v '^\[\]$')" ] && break
            sleep 0.5
        done
        doctor=$(walk_doctor)
        if grep -q 'install geoattrd-geodata' <<<"$doctor"; then
            pass "geoattrd-geodata removed while geoattrd runs: doctor says $(grep -E '^\[(warn|FAIL)\] (index|degraded)' <<<"$doctor" | head -n 1 | head -c 160); $(grep -m 1 'install geoattrd-geodata' <<<"$doctor" | sed 's/^ *//')"
        else
            fail "geoattrd-geodata removed while geoattrd runs: doctor does not say to install geoattrd-geodata:"
            grep -E -A1 '^\[(warn|FAIL)\] (index|degraded)' <<<"$doctor" | indent || true
        fi
    else
        info "the walk without geoattrd-geodata (none built): its removal under the running daemon not tried"
    fi

    # 6. Remove, then purge, with users in geoattrd's groups.
    ct usermod -aG geoattr-metrics prometheus || fail "the walk: usermod -aG geoattr-metrics prometheus failed"
    out=$(ct dpkg -r geoattrd 2>&1) || fail "dpkg -r geoattrd failed: $(tail -c 300 <<<"$out")"
    units=$(ct systemctl list-units --all --no-legend --plain 'geoattrd*' 2>&1 || true)
    for group in geoattr geoattr-state geoattr-metrics; do kept+=("$(ct getent group "$group" || echo "$group: gone")"); done
    if [ -z "$(awk '$3 == "active" { print $1 }' <<<"$units")" ] && ct test -f /etc/geoattrd/geoattrd.yaml &&
        [[ ${kept[0]} == geoattr:*walker* ]] && [[ ${kept[1]} == geoattr-state:* ]] && [[ ${kept[2]} == geoattr-metrics:*prometheus* ]]; then
        pass "dpkg -r geoattrd: no geoattrd unit active, /etc/geoattrd kept, the groups kept with their members ($(printf '%s\n' "${kept[@]}" | cut -d: -f1,4 | paste -sd ' '))"
    else
        fail "dpkg -r geoattrd: units '$(awk '{ print $1, $3 }' <<<"$units" | paste -sd ';')', /etc/geoattrd/geoattrd.yaml $(ct test -f /etc/geoattrd/geoattrd.yaml && echo kept || echo gone), groups: ${kept[*]}"
    fi
    out=$(ct dpkg -P geoattrd 2>&1) || fail "dpkg -P geoattrd failed: $(tail -c 300 <<<"$out")"
    for path in /etc/geoattrd /var/lib/geoattrd /run/geoattrd; do ct test -e "$path" && left+=("$path"); done
    for group in geoattrd geoattrd-gpsd geoattr geoattr-state geoattr-metrics; do ct getent group "$group" >/dev/null && left+=("group $group"); done
    if [ ${#left[@]} -eq 0 ]; then
        pass "dpkg -P geoattrd: /etc/geoattrd, /var/lib/geoattrd, /run/geoattrd and the groups gone"
    else
        fail "dpkg -P geoattrd left ${left[*]}"
    fi
    printed=$(grep '^geoattrd: purge removes group' <<<"$out" || true)
    if grep -q -x 'geoattrd: purge removes group geoattr and with it the membership of walker; a reinstall does not restore them' <<<"$printed" &&
        grep -q -x 'geoattrd: purge removes group geoattr-metrics and with it the membership of prometheus; a reinstall does not restore them' <<<"$printed" &&
        [ "$(grep -c . <<<"$printed")" = 2 ]; then
        pass "the purge said which memberships it drops, for the groups that had members: $(paste -sd '|' <<<"$printed" | sed 's/|/ | /g')"
    else
        fail "the purge's lines on dropped memberships (one each for geoattr: walker, geoattr-metrics: prometheus):"
        indent <<<"${printed:-(none)}"
    fi
    # systemd forgets the units (the postrm's daemon-reload): none is left, not-found or loaded
    # from a file that is gone.
    units=$(ct systemctl list-units --all --no-legend --plain 'geoattrd*' 2>&1 || true)
    if [ -z "$units" ]; then
        pass "after the purge systemctl list-units --all 'geoattrd*' lists no unit (none not-found)"
    else
        fail "after the purge systemctl list-units --all 'geoattrd*' still lists $(awk '{ print $1 " (" $2 ", " $3 ")" }' <<<"$units" | paste -sd ' ')"
    fi
    info "the operator's walk took $((SECONDS - started)) s"
}
walk_failures=$failures
operator_walk
if [ "$failures" -gt "$walk_failures" ]; then
    echo "--- for the failures of section 18: geoattrd's journal in its container"
    ct journalctl -q --no-pager -o short-monotonic -u geoattrd.socket -u geoattrd.service 2>&1 | tail -n 60 | indent || true
fi

if [ "$failures" -gt 0 ]; then
    echo "systemd-test: $failures check(s) failed"
    exit 1
fi
echo "systemd-test: all checks passed"
