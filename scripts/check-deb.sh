#!/usr/bin/env bash
# Builds the .deb and inspects it: the files it must carry, its Depends, its size; then, as root
# on a machine that may be changed (CI), installs it and purges it and checks nothing is left.
set -euo pipefail
cd "$(dirname "$0")/.."
deb=$(bash scripts/make-deb.sh dist | tail -n 1)
echo "package: $deb ($(du -k "$deb" | cut -f1) KiB, installed $(dpkg-deb -f "$deb" Installed-Size) KiB)"
contents=$(dpkg-deb -c "$deb")
for path in ./usr/bin/geoattrd ./usr/bin/geoattrctl ./usr/lib/systemd/system/geoattrd.service \
    ./usr/lib/systemd/system/geoattrd.socket ./usr/lib/systemd/system/geoattrd-gpsd.socket \
    ./usr/lib/systemd/system/geoattrd-gpsd.service ./usr/lib/sysusers.d/geoattrd.conf ./usr/lib/tmpfiles.d/geoattrd.conf \
    ./etc/geoattrd/geoattrd.yaml; do
    grep -q " $path\$" <<<"$contents" || { echo "check-deb: $path is missing" >&2; exit 1; }
done
dpkg-deb -f "$deb" Depends | grep -q libgps28 || { echo "check-deb: Depends lacks libgps28" >&2; exit 1; }
printf '%s\n' "$contents" | awk '{printf "%10s %s\n", $3, $6}' | grep -v '/$'
if [ "$(id -u)" -eq 0 ] && [ "${CI:-}" = "true" ]; then
    before=$(mktemp); after=$(mktemp)
    list() { find / -xdev \( -path /proc -o -path /sys -o -path /tmp -o -path "$PWD" -o -path /var/cache -o -path /var/log \) -prune -o -print 2>/dev/null | sort; }
    list >"$before"
    dpkg -i "$deb" >/dev/null
    getent passwd geoattrd >/dev/null || { echo "check-deb: the geoattrd user was not created" >&2; exit 1; }
    /usr/bin/geoattrd --check-config >/dev/null
    dpkg --purge geoattrd >/dev/null
    list >"$after"
    if ! diff "$before" "$after"; then
        echo "check-deb: dpkg --purge left the files above behind" >&2
        exit 1
    fi
    ! getent passwd geoattrd >/dev/null || { echo "check-deb: the geoattrd user survived the purge" >&2; exit 1; }
    echo "dpkg -i then dpkg --purge: nothing left behind"
fi
