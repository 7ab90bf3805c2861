# shellcheck shell=bash
# The container's tree for scripts/systemd-test.sh (sourced by it, which sets release): a Debian
# tree of that release from scripts/lib/debian-tree.sh, copied once into the test's own cache
# (/var/cache/geoattrd-ci/systemd-test, outside the clone: CI clones afresh each run) and made
# ready to boot there: gpsfake added, Debian's gpsd and node_exporter kept from starting, no
# Debian source left in apt's lists. Each run lays an overlay over it and throws that away.

source scripts/lib/debian-tree.sh
cache=${SYSTEMD_TEST_CACHE:-/var/cache/geoattrd-ci/systemd-test}

# gpsd-clients (gpsfake) depends on GTK and matplotlib (1.5 GB, and a dconf trigger that fails
# without a session bus): the tree takes gpsd and python3-gps, and gpsfake alone from that package.
# dbus and libdbus-1-3: the system bus a Debian device has (geoattrd itself loads no libdbus:
# libgps and libyaml are linked in, without libgps's D-Bus reader).
# prometheus-node-exporter: Debian's node_exporter, which sections 12 and 15 point at geoattrd's
# textfile. nftables: gpsd's guard (section 17).
packages=systemd,systemd-sysv,dbus,libdbus-1-3,gpsd,python3-gps,libstdc++6,iproute2,procps,prometheus-node-exporter,nftables
case $release in
bookworm)
    # The previous release (section 18's upgrade) links libgps28 and libyaml dynamically; the
    # container has no network, so they are in the tree. gpsd 3.22's gpsfake imports distutils.
    packages+=,libgps28,libyaml-0-2,python3-distutils
    ;;
trixie)
    # gpsd 3.25 (libgps30t64): no earlier geoattrd installs here, nothing else to add.
    ;;
*)
    echo "systemd-test: no tree recipe for Debian release '$release' (bookworm or trixie)" >&2
    exit 1
    ;;
esac
arch=$(dpkg --print-architecture)
recipe="$release $arch $packages +gpsfake -sources v2"
tree=$cache/$release-$(printf '%s' "$recipe" | sha256sum | cut -c1-12)

# build_tree: $tree/root ready to boot, made from debian_tree's tree when it is missing or of
# another recipe.
# Under a lock: CI prepares the trees in the background (--prepare) and a run may start meanwhile.
build_tree() {
    if [ "$(cat "$tree/recipe" 2>/dev/null || true)" = "$recipe" ]; then return 0; fi
    mkdir -p "$cache"
    # set -e does not reach into a subshell whose status is tested: build_tree_locked returns at
    # its first failed step (its || return 1), and only a finished tree gets its recipe.
    (
        flock 8 || exit 1
        [ "$(cat "$tree/recipe" 2>/dev/null || true)" = "$recipe" ] || build_tree_locked
    ) 8>"$cache/.lock-$release" || { echo "systemd-test: the $release tree was not built" >&2; exit 1; }
}

build_tree_locked() {
    local base built=$SECONDS
    echo "systemd-test: building the container's tree ($release, once; kept in $tree)"
    base=$(debian_tree "$release" "$arch" "$packages") || { echo "systemd-test: no $release tree" >&2; exit 1; }
    rm -rf "$tree" && mkdir -p "$tree" && cp -a --reflink=auto "$base" "$tree/root.new" ||
        { echo "systemd-test: copying the $release tree failed" >&2; exit 1; }
    # gpsfake is a Python script on python3-gps: take it alone from this release's gpsd-clients
    # (with the host's network: no --private-network here). Then apt forgets Debian's archive: the
    # container has no network, and geoattrd comes from the test's own repository.
    systemd-nspawn -q --register=no --keep-unit -D "$tree/root.new" sh -ec '
        apt-get update -qq
        cd /tmp && apt-get download -qq gpsd-clients
        dpkg-deb --fsys-tarfile gpsd-clients_*.deb | tar -x -C / ./usr/bin/gpsfake
        rm -f gpsd-clients_*.deb
        rm -f /etc/apt/sources.list /etc/apt/sources.list.d/debian.sources
        apt-get clean && rm -rf /var/lib/apt/lists/*' >"$tree/build.log" 2>&1 ||
        { tail -n 20 "$tree/build.log" >&2; echo "systemd-test: fetching gpsfake failed (log: $tree/build.log)" >&2; exit 1; }
    # gpsfake's gpsd takes port 2947: Debian's gpsd.socket and gpsd.service stay out of the way
    # (masked, so geoattrd-gpsd.service's Wants=gpsd.socket starts nothing).
    rm -f "$tree/root.new/etc/systemd/system/sockets.target.wants/gpsd.socket" \
        "$tree/root.new/etc/systemd/system/multi-user.target.wants/gpsd.service" &&
        ln -sf /dev/null "$tree/root.new/etc/systemd/system/gpsd.socket" &&
        ln -sf /dev/null "$tree/root.new/etc/systemd/system/gpsd.service" &&
        # node_exporter starts when section 12 or 15 has configured it, not at boot.
        rm -f "$tree/root.new/etc/systemd/system/multi-user.target.wants/prometheus-node-exporter.service" &&
        mv "$tree/root.new" "$tree/root" ||
        { echo "systemd-test: preparing the $release tree failed" >&2; exit 1; }
    printf '%s\n' "$recipe" >"$tree/recipe"
    echo "systemd-test: tree built in $((SECONDS - built)) s ($(du -sh "$tree/root" | cut -f1); $(chroot "$tree/root" systemctl --version | head -n 1))"
}
