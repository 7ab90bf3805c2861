# Sourced: gpsd replaying share/tracks/demo.nmea through gpsfake, for the benchmark and the
# profile of the daemon at work. Run from the repository's root.
#   gpsd_replay_start WORK   starts it on a free port of 127.0.0.1 (gpsfake's files in WORK) and
#                            returns once the port accepts; sets gpsd_replay_port
#   gpsd_replay_stop         stops gpsfake and its gpsd (safe to call when none runs)
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
