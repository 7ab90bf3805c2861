#!/usr/bin/env bash
# Builds the Debian package: release binaries with the Swift standard library linked in (the
# device needs no Swift toolchain), stripped, installed by scripts/install.sh into a staging root,
# with maintainer scripts that create the user and groups, lay out /run/geoattrd (and repair the
# layout of an older version on upgrade), enable the socket, and purge cleanly.
#   scripts/make-deb.sh [OUTDIR]   -> OUTDIR/geoattrd_VERSION_amd64.deb (default: dist/)
set -euo pipefail
cd "$(dirname "$0")/.."
version=${VERSION:-0.1.0}
out=${1:-dist}
scratch=.build-static
swift build -c release --static-swift-stdlib --scratch-path "$scratch" --product geoattrd >&2
swift build -c release --static-swift-stdlib --scratch-path "$scratch" --product geoattrctl >&2
bin=$(swift build -c release --static-swift-stdlib --scratch-path "$scratch" --show-bin-path)
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bin"
cp "$bin/geoattrd" "$bin/geoattrctl" "$stage/bin/"
strip --strip-unneeded "$stage/bin/geoattrd" "$stage/bin/geoattrctl"
root="$stage/root"
DESTDIR="$root" PREFIX=/usr BINDIR="$stage/bin" bash scripts/install.sh
mkdir -p "$root/DEBIAN"
installed_kb=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
cat >"$root/DEBIAN/control" <<CONTROL
Package: geoattrd
Version: $version
Architecture: amd64
Maintainer: geoattrd maintainers <maintainers@users.noreply.a-seed-01aa94ce.example>
Depends: libc6 (>= 2.36), libgcc-s1, libstdc++6, libgps28, systemd (>= 242)
Recommends: gpsd
Installed-Size: $installed_kb
Section: misc
Priority: optional
Description: OpenTelemetry geo.* attributes for Linux edge devices
 Takes one-shot fixes from gpsd on a timer, reverse-geocodes them offline
 (ISO 3166-1 country, ISO 3166-2 region, locality, postal code), caches the
 result and serves the attributes over a Unix socket to telemetry sidecars.
 Geodata: GeoNames (CC BY 4.0), (c) OpenStreetMap contributors (ODbL).
CONTROL
echo "/etc/geoattrd/geoattrd.yaml" >"$root/DEBIAN/conffiles"
cat >"$root/DEBIAN/postinst" <<'SCRIPT'
#!/bin/sh
set -e
if [ "$1" = "configure" ]; then
    # An upgrade from the layout where clients (group geoattr) could write /run/geoattrd: the
    # group geoattr-state is new, and supervisors must be added to it.
    if getent passwd geoattrd >/dev/null && ! getent group geoattr-state >/dev/null; then
        echo "geoattrd: /run/geoattrd/state is now writable by group geoattr-state only (and /run/geoattrd by geoattrd alone):" >&2
        echo "geoattrd: add device supervisors to it (usermod -aG geoattr-state USER); they write the file in place" >&2
    fi
    systemd-sysusers geoattrd.conf >/dev/null 2>&1 || systemd-sysusers >/dev/null 2>&1 || true
    # The runtime layout (tmpfiles.d/geoattrd.conf): first /run/geoattrd itself, geoattrd:geoattrd
    # 0755, so that no client can plant anything there any more; then whatever a client left at
    # the state file's path that is not a regular file (a symbolic link, FIFO, socket, device or
    # directory) is removed, never followed; then the state file is created, or its owner, group
    # and mode fixed (geoattrd:geoattr-state 0660), its content kept.
    systemd-tmpfiles --create --exclude-prefix=/run/geoattrd/state geoattrd.conf >/dev/null 2>&1 || true
    state=/run/geoattrd/state
    if [ -L "$state" ] || { [ -e "$state" ] && ! [ -f "$state" ]; }; then
        rm -rf "$state" || true
    fi
    systemd-tmpfiles --create geoattrd.conf >/dev/null 2>&1 ||
        echo "geoattrd: systemd-tmpfiles --create geoattrd.conf failed: run it again to see why" >&2
    if [ -d /run/systemd/system ]; then
        systemctl daemon-reload >/dev/null 2>&1 || true
    fi
    # geoattrd-gpsd.socket: gpsd's port inside geoattrd's private network (README, Hardening).
    deb-systemd-helper enable geoattrd.socket geoattrd-gpsd.socket >/dev/null 2>&1 ||
        systemctl enable geoattrd.socket geoattrd-gpsd.socket >/dev/null 2>&1 || true
    if [ -d /run/systemd/system ]; then
        systemctl start geoattrd.socket geoattrd-gpsd.socket >/dev/null 2>&1 || true
    fi
fi
exit 0
SCRIPT
cat >"$root/DEBIAN/prerm" <<'SCRIPT'
#!/bin/sh
set -e
if [ -d /run/systemd/system ]; then
    systemctl stop geoattrd.service geoattrd.socket geoattrd-gpsd.service geoattrd-gpsd.socket >/dev/null 2>&1 || true
fi
exit 0
SCRIPT
cat >"$root/DEBIAN/postrm" <<'SCRIPT'
#!/bin/sh
set -e
if [ "$1" = "remove" ] || [ "$1" = "purge" ]; then
    deb-systemd-helper disable geoattrd.socket geoattrd.service geoattrd-gpsd.socket >/dev/null 2>&1 || true
fi
if [ "$1" = "purge" ]; then
    deb-systemd-helper purge geoattrd.socket geoattrd.service geoattrd-gpsd.socket >/dev/null 2>&1 || true
    rm -rf /var/lib/geoattrd /run/geoattrd /etc/geoattrd
    rm -f /etc/systemd/system/sockets.target.wants/geoattrd.socket /etc/systemd/system/sockets.target.wants/geoattrd-gpsd.socket \
        /etc/systemd/system/multi-user.target.wants/geoattrd.service
    if getent passwd geoattrd >/dev/null; then userdel geoattrd >/dev/null 2>&1 || true; fi
    if getent group geoattrd >/dev/null; then groupdel geoattrd >/dev/null 2>&1 || true; fi
    if getent group geoattr >/dev/null; then groupdel geoattr >/dev/null 2>&1 || true; fi
    if getent group geoattr-state >/dev/null; then groupdel geoattr-state >/dev/null 2>&1 || true; fi
fi
exit 0
SCRIPT
chmod 0755 "$root/DEBIAN/postinst" "$root/DEBIAN/prerm" "$root/DEBIAN/postrm"
mkdir -p "$out"
deb="$out/geoattrd_${version}_amd64.deb"
dpkg-deb --root-owner-group --build "$root" "$deb" >&2
echo "$deb"
