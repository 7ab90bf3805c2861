#!/usr/bin/env bash
# Installs geoattrd: binaries, systemd units, sysusers.d and tmpfiles.d entries, the default
# configuration (never overwriting a local edit: a differing one is left alone and the new
# default goes beside it as geoattrd.yaml.dist) and the world index if one was built.
#   DESTDIR  staging root (packaging), default empty
#   PREFIX   default /usr
#   BINDIR   where the built binaries are, default .build/release
set -euo pipefail
cd "$(dirname "$0")/.."
DESTDIR=${DESTDIR:-}
PREFIX=${PREFIX:-/usr}
BINDIR=${BINDIR:-.build/release}
for binary in geoattrd geoattrctl; do
    [ -x "$BINDIR/$binary" ] || { echo "install: $BINDIR/$binary is missing: swift build -c release first" >&2; exit 1; }
done
install -d "$DESTDIR$PREFIX/bin" "$DESTDIR$PREFIX/lib/systemd/system" "$DESTDIR$PREFIX/lib/sysusers.d" \
    "$DESTDIR$PREFIX/lib/tmpfiles.d" "$DESTDIR/etc/geoattrd" "$DESTDIR$PREFIX/share/doc/geoattrd" "$DESTDIR$PREFIX/share/geoattrd"
install -m 0755 "$BINDIR/geoattrd" "$BINDIR/geoattrctl" "$DESTDIR$PREFIX/bin/"
sed "s|/usr/bin/geoattrd|$PREFIX/bin/geoattrd|" systemd/geoattrd.service >"$DESTDIR$PREFIX/lib/systemd/system/geoattrd.service"
chmod 0644 "$DESTDIR$PREFIX/lib/systemd/system/geoattrd.service"
install -m 0644 systemd/geoattrd.socket systemd/geoattrd-gpsd.socket systemd/geoattrd-gpsd.service \
    "$DESTDIR$PREFIX/lib/systemd/system/"
install -m 0644 systemd/geoattrd.sysusers "$DESTDIR$PREFIX/lib/sysusers.d/geoattrd.conf"
install -m 0644 systemd/geoattrd.tmpfiles "$DESTDIR$PREFIX/lib/tmpfiles.d/geoattrd.conf"
config="$DESTDIR/etc/geoattrd/geoattrd.yaml"
if [ -f "$config" ] && ! cmp -s config/geoattrd.yaml "$config"; then
    install -m 0644 config/geoattrd.yaml "$config.dist"
    echo "install: kept the edited $config; the new default is $config.dist" >&2
else
    install -m 0644 config/geoattrd.yaml "$config"
fi
install -m 0644 README.md "$DESTDIR$PREFIX/share/doc/geoattrd/"
if [ -f cache/geodata/world.gidx ]; then
    install -m 0644 cache/geodata/world.gidx "$DESTDIR$PREFIX/share/geoattrd/world.gidx"
else
    echo "install: no world index built (scripts/fetch-geodata.sh && scripts/build-world-index.sh): geoattrd will serve coordinates only" >&2
fi
