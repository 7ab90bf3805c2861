# The package's prerm after its preamble (scripts/make-deb.sh writes #!/bin/sh, set -e and
# scripts/lib/deb-policy.sh before it). POSIX sh: dash runs it.
# Where a policy-rc.d forbids stopping units, they keep running (the postinst then starts none).
if units_may stop; then
    # A daemon that runs without being enabled (started by a client through its socket, or by
    # hand) runs again after the upgrade too: the postinst reads this mark (root's, in /run).
    rm -f /run/geoattrd.upgrade-active
    if [ "$1" = "upgrade" ] && systemctl --quiet is-active geoattrd.service 2>/dev/null; then
        : >/run/geoattrd.upgrade-active
    fi
    systemctl stop geoattrd.service geoattrd.socket geoattrd-gpsd.service geoattrd-gpsd.socket \
        geoattrd-metrics-proxy.service geoattrd-metrics-proxy.socket geoattrd-metrics.socket >/dev/null 2>&1 || true
    # The port guards stay in place through an upgrade: stopping them would open the ports
    # meanwhile.
    if [ "$1" = "remove" ]; then
        systemctl stop geoattrd-gpsd-guard.service geoattrd-metrics-guard.service >/dev/null 2>&1 || true
    fi
fi
exit 0
