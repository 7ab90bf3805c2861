# shellcheck shell=bash
# Section 17 of scripts/systemd-test.sh (sourced by it):
#  17. gpsd's guard (geoattrd-gpsd-guard.service, opt-in): off, a user in none of geoattrd's
#      groups reads gpsd's reports on 127.0.0.1:2947 and `geoattrctl doctor` (as root) warns that
#      any local user reaches gpsd; on, that user is refused (a reset) while root's and the
#      relay's user's (geoattrd-gpsd) go through, geoattrd still reaches gpsd through its relay,
#      doctor says a local user no one named is refused, and a name in GPSD_GUARD_USERS lets that
#      user in; whatever flushes the ruleset (nftables' first start, its restart, `nft -f
#      /etc/nftables.conf` by hand, `systemctl stop nftables`) has the table back within 2 s, the
#      outsider refused again and the guard active; stopped, the table is gone.
# It needs section 15's outsider and ruled.

section_17() {
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
    ct systemctl reload geoattrd-gpsd-guard.service || true
    guard_after_flushes
    ct systemctl stop geoattrd-gpsd-guard.service || true
    tables=$(ct nft list tables 2>&1 || true)
    if [[ $tables != *geoattrd_gpsd_guard* ]] && [ "$(gpsd_as outsider)" = reports ]; then
        pass "systemctl stop geoattrd-gpsd-guard: the table is gone and gpsd serves every local user again ($((SECONDS - started)) s for the guard's checks)"
    else
        fail "after systemctl stop geoattrd-gpsd-guard: tables '$tables'"
    fi
}

# guard_after_flushes: each way the ruleset gets flushed, then: the guards' tables back within 2 s
# (polled every 0.1 s; the metrics port's too, when section 11 started its socket), the outsider
# refused by gpsd's, the guards active. nftables.conf is Debian's (it begins with "flush ruleset").
guard_after_flushes() {
    local how started waited back state outsider tables=(geoattrd_gpsd_guard) units=(geoattrd-gpsd-guard.service) table
    if ct systemctl --quiet is-active geoattrd-metrics-guard.service; then
        tables+=(geoattrd_metrics_guard) units+=(geoattrd-metrics-guard.service)
    fi
    for how in "systemctl enable --now nftables.service" "systemctl restart nftables.service" \
        "nft -f /etc/nftables.conf" "systemctl stop nftables.service"; do
        # Present before, so that "back" is the watchers' doing.
        for table in "${tables[@]}"; do
            ct nft list table inet "$table" >/dev/null 2>&1 || { fail "$how: $table is missing before it"; continue 2; }
        done
        ct sh -c "$how" >/dev/null 2>&1 || { fail "$how failed"; continue; }
        started=$(date +%s%N) back=
        while :; do
            waited=$((($(date +%s%N) - started) / 1000000))
            back=yes
            for table in "${tables[@]}"; do
                ct nft list table inet "$table" >/dev/null 2>&1 || back=
            done
            [ -z "$back" ] && [ "$waited" -lt 2000 ] || break
            sleep 0.1
        done
        state=$(ct systemctl is-active "${units[@]}" 2>&1 | paste -sd ' ' || true)
        outsider=$(gpsd_as outsider)
        if [ -n "$back" ] && [ "$state" = "$(printf 'active %.0s' "${units[@]}" | sed 's/ $//')" ] && [ "$outsider" = refused ]; then
            pass "$how: ${tables[*]} back within ${waited} ms of the command's return (the watchers), outsider refused by gpsd's, the guards active"
        else
            fail "$how: ${tables[*]} back: ${back:-no, after $waited ms}; the guards '$state'; outsider got '$outsider' from gpsd"
            ct journalctl -q -o cat --no-pager "${units[@]/#/-u}" | tail -n 10 | indent || true
        fi
    done
}
