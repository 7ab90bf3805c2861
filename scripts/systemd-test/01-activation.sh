# shellcheck shell=bash
# Section 1 of scripts/systemd-test.sh (sourced by it): both sockets listen and the first client's
# fix arrives through geoattrd-gpsd.socket and its relay (the track's coordinates, to 1e-4
# degrees). This first client starts geoattrd: sections 2 to 8 look at what that start left.

section_1() {
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
}
