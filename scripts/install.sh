#!/usr/bin/env bash
# Installs geoattrd: binaries, systemd units, sysusers.d and tmpfiles.d entries, the default
# configuration (never overwriting a local edit: a differing one is left alone and the new
# default goes beside it as geoattrd.yaml.dist), the manual pages if there are any (man/) and the
# world index if one was built. Installed into the running system (no DESTDIR, as root), it also
# creates the user and groups and lays out /run/geoattrd as the package's postinst does,
# repairing an older version's layout.
#   DESTDIR  staging root (packaging), default empty
#   PREFIX   default /usr
#   BINDIR   where the built binaries are, default .build/release
#   WITH_INDEX=0  leaves the world index out (the packages ship it apart, in geoattrd-geodata)
set -euo pipefail
cd "$(dirname "$0")/.."
DESTDIR=${DESTDIR:-}
PREFIX=${PREFIX:-/usr}
BINDIR=${BINDIR:-.build/release}
WITH_INDEX=${WITH_INDEX:-1}
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
for page in man/*.[1-8]; do
    [ -f "$page" ] || continue
    section=${page##*.}
    install -d "$DESTDIR$PREFIX/share/man/man$section"
    gzip -9n <"$page" >"$DESTDIR$PREFIX/share/man/man$section/${page##*/}.gz"
    chmod 0644 "$DESTDIR$PREFIX/share/man/man$section/${page##*/}.gz"
done
if [ "$WITH_INDEX" != 0 ] && [ -f cache/geodata/world.gidx ]; then
    install -m 0644 cache/geodata/world.gidx "$DESTDIR$PREFIX/share/geoattrd/world.gidx"
elif [ "$WITH_INDEX" != 0 ]; then
    echo "install: no world index built (scripts/fetch-geodata.sh && scripts/build-world-index.sh): geoattrd will serve coordinates only" >&2
fi

# Into the running system: the user and groups, then the runtime layout, as the package's postinst
# does: /run/geoattrd first (geoattrd:geoattrd 0755: nothing can be planted there any more), then
# whatever is at the state file's path and is not a regular file (a symbolic link, FIFO, socket,
# device or directory) is removed, never followed, then the state file is created or its owner,
# group and mode fixed (geoattrd:geoattr-state 0660).
if [ -z "$DESTDIR" ] && [ "$(id -u)" -eq 0 ] && command -v systemd-sysusers >/dev/null && command -v systemd-tmpfiles >/dev/null; then
    if getent passwd geoattrd >/dev/null && ! getent group geoattr-state >/dev/null; then
        echo "install: /run/geoattrd/state is now writable by group geoattr-state only (and /run/geoattrd by geoattrd alone): add device supervisors to it (usermod -aG geoattr-state USER); they write the file in place" >&2
    fi
    systemd-sysusers "$PREFIX/lib/sysusers.d/geoattrd.conf"
    systemd-tmpfiles --create --exclude-prefix=/run/geoattrd/state "$PREFIX/lib/tmpfiles.d/geoattrd.conf"
    state=/run/geoattrd/state
    if [ -L "$state" ] || { [ -e "$state" ] && ! [ -f "$state" ]; }; then
        echo "install: removing $state: not a regular file" >&2
        rm -rf "$state"
    fi
    systemd-tmpfiles --create "$PREFIX/lib/tmpfiles.d/geoattrd.conf"
elif [ -z "$DESTDIR" ]; then
    echo "install: run systemd-sysusers and systemd-tmpfiles --create geoattrd.conf as root before starting geoattrd.socket" >&2
fi
