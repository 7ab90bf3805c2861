#!/usr/bin/env bash
# Debian 13's gpsfake and gpsd (3.25) on this Debian 12 host: runs gpsfake with the given
# arguments and the caller's environment (TMPDIR included) inside a cached trixie tree, chrooted,
# on the host's network, in a private mount namespace that has /proc, /dev and the host's /tmp.
# It execs all the way down, so the caller's child pid and process group are gpsfake's own (the
# tests signal that group and read its standard error).
#   GEOATTRD_GPSFAKE="bash scripts/gpsfake-trixie.sh" GEOATTRD_GPSD_RELEASE=3.25 \
#       swift test --skip-build --filter GeoAttrGPSDTests
#   bash scripts/gpsfake-trixie.sh --prepare    # builds the tree once; PASS/FAIL: gpsd 3.25, gpsfake
# The tree (debian_tree's trixie gpsd,python3-gps plus /usr/bin/gpsfake taken alone out of
# gpsd-clients, which would pull GTK and matplotlib) is kept in $GPSFAKE_TRIXIE_CACHE, default
# /var/cache/geoattrd-ci/gpsfake-trixie. Root only (chroot, mounts).
set -euo pipefail

cache=${GPSFAKE_TRIXIE_CACHE:-/var/cache/geoattrd-ci/gpsfake-trixie}
packages=ca-certificates,gpsd,python3-gps
recipe="trixie amd64 $packages +gpsfake gpsd-3.25 v1"
root=$cache/root

# in_tree ROOT EXTRA COMMAND...: COMMAND chrooted in ROOT, in a private mount namespace that has
# /proc, /dev with its pty devices (gpsfake opens a pseudo-terminal that gpsd then opens by its
# /dev/pts path, so it must be the host's devpts), the host's /tmp at the same path, and EXTRA
# (a directory, or nothing) at its own path. The namespace's mounts end with its last process;
# none reaches the host's namespace (private propagation).
# shellcheck disable=SC2016 # the inner bash expands them, from its own arguments
inner='root=$1 extra=$2
    shift 2
    mount -t proc proc "$root/proc"
    mount --rbind /dev "$root/dev"
    mount --rbind /tmp "$root/tmp"
    if [ -n "$extra" ]; then mount --rbind "$extra" "$root$extra"; fi
    exec chroot "$root" "$@"'
in_tree() { unshare -m --propagation private -- bash -c "$inner" _ "$@"; }

# build_tree: the prepared tree, made from debian_tree's once and kept (under a lock: tests may
# start several gpsfakes at once, and only one of them must build it).
build_tree() {
    [ "$(cat "$cache/root.ok" 2>/dev/null || true)" = "$recipe" ] && return 0
    mkdir -p "$cache"
    exec 9>"$cache/lock"
    flock 9
    if [ "$(cat "$cache/root.ok" 2>/dev/null || true)" != "$recipe" ]; then
        local started=$SECONDS base
        echo "gpsfake-trixie: preparing the tree in $root (once)" >&2
        # shellcheck source=scripts/lib/debian-tree.sh
        source "$(dirname "${BASH_SOURCE[0]}")/lib/debian-tree.sh"
        base=$(debian_tree trixie amd64 "$packages")
        rm -rf "$root" "$cache/root.new" "$cache/root.ok"
        # The shared tree stays as it is: this one is a copy.
        cp -a --reflink=auto "$base" "$cache/root.new"
        # gpsfake is a Python script on python3-gps: taken alone from gpsd-clients. A mirror's
        # hiccup is not a finding: three attempts, 20 s apart.
        local attempt
        for attempt in 1 2 3; do
            if in_tree "$cache/root.new" "" sh -ec '
                apt-get update -qq
                cd /var/cache/apt/archives && apt-get download -qq gpsd-clients
                dpkg-deb --fsys-tarfile gpsd-clients_*.deb | tar -x -C / ./usr/bin/gpsfake
                rm -f gpsd-clients_*.deb
                apt-get clean && rm -rf /var/lib/apt/lists/*' >"$cache/prepare.log" 2>&1; then
                break
            fi
            tail -n 20 "$cache/prepare.log" >&2
            if [ "$attempt" -eq 3 ]; then
                echo "gpsfake-trixie: fetching gpsfake failed 3 times (log: $cache/prepare.log)" >&2
                exit 1
            fi
            echo "gpsfake-trixie: fetching gpsfake failed (attempt $attempt of 3); again in 20 s" >&2
            sleep 20
        done
        # A tree whose gpsd is not 3.25 would make every comparison against it meaningless.
        local version
        version=$(chroot "$cache/root.new" /usr/sbin/gpsd -V 2>&1 || true)
        case $version in
            *": 3.25 "*) ;;
            *) echo "gpsfake-trixie: the tree's gpsd says '$version', not 3.25" >&2; exit 1 ;;
        esac
        [ -x "$cache/root.new/usr/bin/gpsfake" ] || { echo "gpsfake-trixie: no gpsfake in the tree" >&2; exit 1; }
        mv "$cache/root.new" "$root"
        printf '%s\n' "$recipe" >"$cache/root.ok"
        echo "gpsfake-trixie: tree ready in $((SECONDS - started)) s ($(du -sh "$root" | cut -f1))" >&2
    fi
    exec 9>&-
}

if [ "$(id -u)" -ne 0 ]; then
    echo "gpsfake-trixie: needs root (chroot and mounts)" >&2
    exit 77
fi
build_tree

if [ "${1:-}" = "--prepare" ]; then
    # The version, and that gpsfake starts in the tree: a broken tree fails here, once, and not
    # as every test's gpsfake that never listens.
    version=$(chroot "$root" /usr/sbin/gpsd -V 2>&1 || true)
    case $version in
        *": 3.25 "*) echo "PASS gpsfake-trixie: $version" ;;
        *) echo "FAIL gpsfake-trixie: the tree's gpsd says '$version', not 3.25"; exit 1 ;;
    esac
    if usage=$(in_tree "$root" "" /usr/bin/gpsfake -h 2>&1) && [[ $usage == *"-P"* ]]; then
        echo "PASS gpsfake-trixie: gpsfake runs in the tree"
    else
        echo "FAIL gpsfake-trixie: gpsfake -h in the tree: $usage"
        exit 1
    fi
    exit 0
fi

# A TMPDIR outside /tmp is bound at its own path too (its mount point made in this tree).
tmpdir=${TMPDIR:-/tmp}
case $tmpdir/ in
    /tmp/*) extra_bind= ;;
    *) extra_bind=$(realpath "$tmpdir"); mkdir -p "$root$extra_bind" ;;
esac

# unshare and bash exec, and chroot execs gpsfake: one pid from here to gpsfake.
exec unshare -m --propagation private -- bash -c "$inner" _ "$root" "$extra_bind" /usr/bin/gpsfake "$@"
