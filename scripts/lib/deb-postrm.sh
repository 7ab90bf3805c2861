# The package's postrm after its preamble (scripts/make-deb.sh writes #!/bin/sh and set -e
# before it). POSIX sh: dash runs it.
if [ "$1" = "remove" ] || [ "$1" = "purge" ]; then
    deb-systemd-helper disable geoattrd.socket geoattrd.service geoattrd-gpsd.socket \
        geoattrd-metrics.socket geoattrd-metrics-proxy.socket geoattrd-gpsd-guard.service geoattrd-metrics-guard.service >/dev/null 2>&1 || true
fi
if [ "$1" = "purge" ]; then
    deb-systemd-helper purge geoattrd.socket geoattrd.service geoattrd-gpsd.socket \
        geoattrd-metrics.socket geoattrd-metrics-proxy.socket geoattrd-gpsd-guard.service geoattrd-metrics-guard.service >/dev/null 2>&1 || true
    rm -rf /var/lib/geoattrd /run/geoattrd /etc/geoattrd
    rm -f /etc/systemd/system/sockets.target.wants/geoattrd.socket /etc/systemd/system/sockets.target.wants/geoattrd-gpsd.socket \
        /etc/systemd/system/sockets.target.wants/geoattrd-metrics.socket \
        /etc/systemd/system/sockets.target.wants/geoattrd-metrics-proxy.socket \
        /etc/systemd/system/multi-user.target.wants/geoattrd.service \
        /etc/systemd/system/sysinit.target.wants/geoattrd-gpsd-guard.service
    if getent passwd geoattrd >/dev/null; then userdel geoattrd >/dev/null 2>&1 || true; fi
    if getent passwd geoattrd-gpsd >/dev/null; then userdel geoattrd-gpsd >/dev/null 2>&1 || true; fi
    # The operator added users to these groups by hand: a group that goes takes their membership
    # with it, and a reinstall makes the group anew, empty. Said, so that it can be restored; a
    # group that stays (some user's primary group) is said too.
    for group in geoattrd-gpsd geoattrd geoattr geoattr-state geoattr-metrics; do
        entry=$(getent group "$group") || continue
        members=${entry##*:}
        if groupdel "$group" >/dev/null 2>&1; then
            if [ -n "$members" ]; then
                printf 'geoattrd: purge removes group %s and with it the membership of %s; a reinstall does not restore them\n' \
                    "$group" "$(printf '%s' "$members" | sed 's/,/, /g')" >&2
            fi
        else
            printf 'geoattrd: group %s stays (groupdel refused it: is it a user'"'"'s primary group?)\n' "$group" >&2
        fi
    done
fi
# The unit files are gone: systemd forgets the units, rather than listing them as not-found.
if { [ "$1" = "remove" ] || [ "$1" = "purge" ]; } && [ -d /run/systemd/system ]; then
    systemctl reset-failed geoattrd.service geoattrd.socket geoattrd-gpsd.service geoattrd-gpsd.socket \
        geoattrd-metrics.socket geoattrd-metrics-proxy.service geoattrd-metrics-proxy.socket \
        geoattrd-gpsd-guard.service geoattrd-metrics-guard.service >/dev/null 2>&1 || true
    systemctl daemon-reload >/dev/null 2>&1 || true
fi
exit 0
