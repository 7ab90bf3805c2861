# shellcheck shell=bash
# Sections 2 to 4 of scripts/systemd-test.sh (sourced by it): geoattrd's namespaces, in the process
# section 1's client started.
#   2. its network namespace: loopback only, the one 127.0.0.1:2947 listener, and neither the
#      container's other listeners nor other addresses reachable from it; and the gpsd relay's IP
#      access list (IPAddressDeny=, IPAddressAllow= as systemd read them from
#      geoattrd-gpsd.service), which keeps the relay, in the container's network, on loopback:
#      a transient unit with the same list reaches 127.0.0.1 and not the container's other
#      address (systemd enforces it with BPF on a cgroup v2 hierarchy only);
#   3. its /tmp and /var/tmp are private;
#   4. a restart keeps the namespace (same netns, `geoattrctl refresh --wait 30` succeeds), and
#      section 8's runtime layout holds after it.

# geoattrd_pid: geoattrd.service's main process; nothing when it has none.
geoattrd_pid() {
    local pid
    pid=$(ct systemctl show -p MainPID --value geoattrd.service)
    [ "$pid" = 0 ] || echo "$pid"
}

# Something outside geoattrd's namespace to (not) reach: a second interface with an address of its
# own, and an HTTP server on all the container's addresses.
reachability_fixture() {
    ct ip link add st0 type veth peer name st1
    ct ip addr add 10.231.0.1/24 dev st0
    ct ip link set st0 up
    ct ip link set st1 up
    ct systemd-run --quiet --collect --unit=systemd-test-http python3 -m http.server --bind 0.0.0.0 --directory /usr/share 8080
    for _ in $(seq 50); do
        [ -n "$(ct ss -Hltn 'sport = :8080' || true)" ] && break
        sleep 0.1
    done
}
# connect NETNS-PID HOST PORT: a TCP connection from that process's network namespace; prints why not.
connect() {
    local out
    if out=$(ct nsenter -t "$1" -n timeout 3 bash -c "exec 3<>/dev/tcp/$2/$3" 2>&1); then return 0; fi
    out=$(printf '%s\n' "$out" | tail -n 1)
    echo "${out##*: }"
    return 1
}

section_2() {
    reachability_fixture
    pid=$(geoattrd_pid)
    [ -n "$pid" ] || fail "geoattrd.service has no main process: network and /tmp checks skipped"
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
    relay_acl_checks
}

# relay_acl_checks: the relay's IP access list, applied to a probe of the same two addresses.
relay_acl_checks() {
    local deny allow hierarchy got
    deny=$(ct systemctl show -p IPAddressDeny --value geoattrd-gpsd.service)
    allow=$(ct systemctl show -p IPAddressAllow --value geoattrd-gpsd.service)
    hierarchy=$(ct stat -fc %T /sys/fs/cgroup)
    got=$(ct systemd-run --quiet --wait --pipe --collect -p IPAddressDeny="$deny" -p IPAddressAllow="$allow" python3 -c '
import socket
for host in ("127.0.0.1", "10.231.0.1"):
    try:
        socket.create_connection((host, 8080), timeout=2).close()
        print(host, "reached")
    except OSError:
        print(host, "blocked")' 2>&1 | paste -sd ',' || true)
    if [ -n "$deny" ] && [ "$got" = "127.0.0.1 reached,10.231.0.1 blocked" ]; then
        pass "the relay's IP access list (IPAddressDeny=$deny, IPAddressAllow=$allow) holds on this $hierarchy hierarchy: a unit with it reaches 127.0.0.1:8080, not 10.231.0.1:8080"
    else
        fail "the relay's IP access list (IPAddressDeny=${deny:-none}, IPAddressAllow=${allow:-none}) on this $hierarchy hierarchy: a unit with it got '$got' (expected 127.0.0.1 reached, 10.231.0.1 blocked)"
    fi
}

section_3() {
    pid=$(geoattrd_pid)
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
}

section_4() {
    pid=$(geoattrd_pid)
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
}
