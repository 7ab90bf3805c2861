# Sourced: the daemon at work as the footprint benchmark measures it and the code layout is
# profiled on (gpsd replaying share/tracks/demo.nmea, the daemon's first fix, then 20 queries).
# Run from the repository's root.
#   gpsd_replay_start WORK   starts gpsfake on a free port of 127.0.0.1 (its files in WORK) and
#                            returns once the port accepts; sets gpsd_replay_port
#   gpsd_replay_stop         stops gpsfake and its gpsd (safe to call when none runs)
#   scenario_user WORK       makes WORK/state for the daemon's user: nobody when run as root, else
#                            the caller; sets scenario_as_user (the command prefix that runs as
#                            it), scenario_uid and scenario_gid
#   scenario_get SOCKET [ARGS...]
#                            geoattrctl get ($scenario_ctl) as that user
#   scenario_first_fix NAME PID SOCKET LOG TIMEOUT
#                            waits until the daemon (PID: it or its tracer) serves a fix; exits
#                            with LOG on stderr when PID ends or TIMEOUT seconds pass; sets
#                            scenario_fix_seconds
#   scenario_queries SOCKET  the scenario's 20 queries
gpsd_replay_pid='' gpsd_replay_port=''

gpsd_replay_start() {
    local work=$1
    gpsd_replay_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    # Pipe mode: gpsd reads the log at once, looping over it. Its own session, so that gpsfake
    # and its gpsd stop together.
    TMPDIR="$work" setsid gpsfake -p -q -P "$gpsd_replay_port" -c 0.05 share/tracks/demo.nmea >"$work/gpsfake.out" 2>"$work/gpsfake.err" &
    gpsd_replay_pid=$!
    for _ in $(seq 200); do
        (exec 3<>"/dev/tcp/127.0.0.1/$gpsd_replay_port") 2>/dev/null && return 0
        kill -0 "$gpsd_replay_pid" 2>/dev/null || { cat "$work/gpsfake.err" >&2; return 1; }
        sleep 0.05
    done
    echo "gpsd-replay: gpsd did not listen on port $gpsd_replay_port within 10 s" >&2
    return 1
}

gpsd_replay_stop() {
    [ -n "$gpsd_replay_pid" ] || return 0
    kill -TERM -- "-$gpsd_replay_pid" 2>/dev/null || true
    sleep 0.3
    kill -KILL -- "-$gpsd_replay_pid" 2>/dev/null || true
    wait "$gpsd_replay_pid" 2>/dev/null || true
    gpsd_replay_pid=''
}

scenario_as_user=() scenario_uid='' scenario_gid='' scenario_ctl='' scenario_fix_seconds=''

scenario_user() {
    local work=$1
    mkdir -p "$work/state"
    scenario_uid=$(id -u) scenario_gid=$(id -g) scenario_as_user=()
    if [ "$scenario_uid" -eq 0 ]; then
        scenario_uid=$(id -u nobody) scenario_gid=$(getent group nogroup | cut -d: -f3)
        scenario_as_user=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
        chown nobody:nogroup "$work/state"
    fi
}

scenario_get() {
    local socket=$1
    shift
    "${scenario_as_user[@]}" "$scenario_ctl" get --socket "$socket" "$@"
}

scenario_first_fix() {
    local name=$1 pid=$2 socket=$3 log=$4 timeout=$5 started=$SECONDS
    until scenario_get "$socket" >/dev/null 2>&1; do
        kill -0 "$pid" 2>/dev/null || { cat "$log" >&2; echo "$name: the daemon exited" >&2; exit 1; }
        [ $((SECONDS - started)) -lt "$timeout" ] || { cat "$log" >&2; echo "$name: no fix in $timeout s" >&2; exit 1; }
        sleep 0.2
    done
    scenario_fix_seconds=$((SECONDS - started))
}

scenario_queries() {
    for _ in $(seq 20); do scenario_get "$1" >/dev/null; done
}
