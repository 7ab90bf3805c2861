#!/usr/bin/env bash
# Builds the geoattrd package of an earlier release from its tag, for the upgrade test
# (scripts/systemd-test.sh): the tagged tree is exported with git archive and built by its own
# make-deb.sh. A release is built once: the package is kept in CACHE (default
# /var/cache/geoattrd-ci/releases) under the tag and the commit it names, outside the clone.
#   scripts/previous-release-deb.sh [TAG]   (default: the newest v* tag below this tree's release)
#   prints the package's path on stdout; the build's output goes to stderr.
set -euo pipefail
cd "$(dirname "$0")/.."
cache=${CACHE:-/var/cache/geoattrd-ci/releases}
current=$(sed -n 's/^ *public static let number = "\([0-9.]*\)"$/\1/p' Sources/GeoAttrModel/ProductVersion.swift)
tag=${1:-}
if [ -z "$tag" ]; then
    # Tags come with a clone; a shallow or tagless one fetches them.
    [ -n "$(git tag --list 'v*')" ] || git fetch --quiet --tags origin >&2 || true
    for candidate in $(git tag --list 'v*' --sort=-version:refname); do
        if dpkg --compare-versions "${candidate#v}" lt "$current"; then tag=$candidate; break; fi
    done
    [ -n "$tag" ] || { echo "previous-release-deb: no v* tag older than $current (git fetch --tags)" >&2; exit 1; }
fi
commit=$(git rev-parse --verify --quiet "$tag^{commit}") || { echo "previous-release-deb: no tag $tag (git fetch --tags)" >&2; exit 1; }
dir=$cache/$tag-$commit
arch=$(dpkg --print-architecture)
deb=$dir/geoattrd_${tag#v}_$arch.deb
if [ ! -f "$deb" ]; then
    echo "previous-release-deb: building $tag ($commit) in $dir/src (once; some 15 minutes)" >&2
    rm -rf "$dir"
    mkdir -p "$dir/src"
    git archive "$commit" | tar -x -C "$dir/src"
    # The release's make-deb.sh writes its geoattrd package first; its index stays where it was.
    built=$(cd "$dir/src" && bash scripts/make-deb.sh "$dir/out" | head -n 1)
    cp "$built" "$deb.partial"
    mv "$deb.partial" "$deb"
    # The build tree is several gigabytes; the package is what is kept.
    rm -rf "$dir/src" "$dir/out"
fi
echo "$deb"
