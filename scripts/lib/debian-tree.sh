# shellcheck shell=bash
# Sourced: debian_tree RELEASE ARCH [PACKAGE,...] prints the path of a Debian tree (debootstrap,
# minbase) of that release and architecture with those packages, built once and kept outside the
# clone in $DEBIAN_TREES (default /var/cache/geoattrd-ci/trees), under a name made of its recipe.
# The tree is read-only by convention: a test lays an overlay over it, or copies it
# (cp -a --reflink=auto), and never writes into it. The host's architecture only: arm64 is
# tested against a sysroot of unpacked packages under qemu-user (scripts/arm64/).
#   trees=$(debian_tree trixie amd64 gpsd,python3-gps)
# The mirror is the one this machine's apt uses, or DEBIAN_MIRROR. A mirror's hiccup is not a
# finding: three attempts, 20 s apart.
debian_tree() {
    local release=$1 arch=$2 packages=${3:-} trees=${DEBIAN_TREES:-/var/cache/geoattrd-ci/trees}
    local recipe key dir
    recipe="$release $arch minbase ${packages} v1"
    key=$(printf '%s' "$recipe" | sha256sum | cut -c1-12)
    dir=$trees/$release-$arch-$key
    if [ "$(cat "$dir/recipe" 2>/dev/null || true)" = "$recipe" ]; then
        printf '%s\n' "$dir/root"
        return 0
    fi
    # CI prepares trees in the background while tests that want the same tree may start: one
    # builds it, the others wait for it (the lock is released when the subshell ends).
    mkdir -p "$trees"
    (
        flock 8
        [ "$(cat "$dir/recipe" 2>/dev/null || true)" = "$recipe" ] || debian_tree_build "$release" "$arch" "$packages" "$recipe" "$dir"
    ) 8>"$trees/.lock-$release-$arch-$key" || return 1
    printf '%s\n' "$dir/root"
}

# debian_tree_build RELEASE ARCH PACKAGES RECIPE DIR: debootstraps the tree into DIR/root, under
# debian_tree's lock.
debian_tree_build() {
    local release=$1 arch=$2 packages=$3 recipe=$4 dir=$5 mirror attempt log
    mirror=${DEBIAN_MIRROR:-}
    if [ -z "$mirror" ]; then
        mirror=$( { sed -n 's/^URIs:[[:space:]]*//p' /etc/apt/sources.list.d/*.sources 2>/dev/null | tr ' ' '\n'
            awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /^https?:/) print $i }' /etc/apt/sources.list 2>/dev/null
        } | grep -E '^https?://.*/debian/?$' | head -n 1 || true)
        mirror=${mirror:-http://deb.debian.org/debian}
    fi
    command -v debootstrap >/dev/null ||
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 debootstrap >/dev/null
    if [ "$arch" != "$(dpkg --print-architecture)" ]; then
        echo "debian-tree: $arch: this machine bootstraps $(dpkg --print-architecture) trees only" >&2
        return 64
    fi
    echo "debian-tree: $recipe from $mirror (once; kept in $dir)" >&2
    rm -rf "$dir"
    mkdir -p "$dir"
    log=$dir/debootstrap.log
    for attempt in 1 2 3; do
        rm -rf "$dir/root"
        debootstrap --arch="$arch" --variant=minbase ${packages:+--include="$packages"} \
            "$release" "$dir/root" "$mirror" >"$log" 2>&1 && break
        tail -n 30 "$log" >&2
        if [ "$attempt" -eq 3 ]; then
            echo "debian-tree: debootstrap $release $arch failed 3 times (log: $log)" >&2
            return 1
        fi
        echo "debian-tree: debootstrap failed (attempt $attempt of 3); again in 20 s" >&2
        sleep 20
    done
    rm -rf "$dir/root/var/cache/apt/archives/"*.deb
    printf '%s\n' "$recipe" >"$dir/recipe"
}
