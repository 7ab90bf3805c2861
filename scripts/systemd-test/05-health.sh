# shellcheck shell=bash
# Sections 5 to 7 of scripts/systemd-test.sh (sourced by it), on the geoattrd section 1 started:
#   5. its journal has nothing at warning or worse, and libdispatch's "Failed to set thread
#      priority" only as expected: never errno=1 (the syscall filter), at most one errno=13 per
#      daemon process (its attempt at nice -4 without CAP_SYS_NICE);
#   6. no restarts, no failed unit; the exposure systemd itself computes (informational);
#   7. Type=notify: active, and STATUS= shown by systemctl; the watchdog: WatchdogSec= in force and
#      a WATCHDOG=1 received since the daemon became ready (up to 16 s: it pings every 15 s).
# With SYSTEMD_TEST_IDLE=1, section 7 then waits for the relay to exit after its idle minute and
# checks that the next fix starts it again (about 70 s more).

section_5() {
    # libdispatch logs "Failed to set thread priority for worker thread: ... errno=N" (at info) when
    # it cannot renice a worker thread. errno=1 (EPERM) is the syscall filter refusing
    # setpriority(): the unit allows it back, so none may appear (there were several per process,
    # recurring). errno=13 (EACCES) is its one attempt per process to raise a worker to nice -4,
    # refused for want of CAP_SYS_NICE, which the unit does not grant: one per daemon process is
    # expected (docs/operating.md, Units).
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
}

section_6() {
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
}

section_7() {
    status=$(ct systemctl show -p StatusText --value geoattrd.service)
    active=$(ct systemctl show -p Type -p ActiveState -p SubState --value geoattrd.service | tr '\n' ' ')
    if [ -n "$status" ] && [ "$active" = "notify active running " ]; then
        pass "Type=notify: active (running), StatusText=\"$status\""
    else
        fail "Type/ActiveState/SubState: $active; StatusText: \"$status\""
    fi
    watchdog_checks
    if [ "${SYSTEMD_TEST_IDLE:-0}" = 1 ]; then relay_idle_checks; fi
}

# watchdog_checks: systemd records each WATCHDOG=1 it accepts in WatchdogTimestamp, and READY=1 in
# ActiveEnterTimestamp: a later watchdog timestamp is a keep-alive that reached it.
watchdog_checks() {
    local usec pinged ready started=$SECONDS
    usec=$(ct systemctl show -p WatchdogUSec --value geoattrd.service)
    while :; do
        pinged=$(ct systemctl show -p WatchdogTimestampMonotonic --value geoattrd.service)
        ready=$(ct systemctl show -p ActiveEnterTimestampMonotonic --value geoattrd.service)
        [ "${pinged:-0}" -gt "${ready:-0}" ] && break
        [ $((SECONDS - started)) -lt 16 ] || break
        sleep 1
    done
    if [ "$usec" != 0 ] && [ -n "$usec" ] && [ "${pinged:-0}" -gt "${ready:-0}" ]; then
        pass "the watchdog: WatchdogUSec=$usec, a WATCHDOG=1 arrived $(((pinged - ready) / 1000000)) s after READY=1 (waited $((SECONDS - started)) s)"
    else
        fail "the watchdog: WatchdogUSec=${usec:-none}; no WATCHDOG=1 since READY=1 in $((SECONDS - started)) s (WatchdogTimestampMonotonic $pinged, ActiveEnterTimestampMonotonic $ready)"
    fi
}

# relay_idle_checks: the relay's idle exit and its start again at the next fix.
relay_idle_checks() {
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
}
