#!/usr/bin/env bash
# Builds the geoattrd package of the previous release, for the upgrade test
# (scripts/systemd-test.sh): the release's tree is exported with git archive and built by its own
# make-deb.sh. A release is built once: the package is kept in CACHE (default
# /var/cache/geoattrd-ci/releases) under the version and the commit, outside the clone.
#   scripts/previous-release-deb.sh [COMMIT]
#   prints the package's path on stdout; the build's output goes to stderr.
# The previous release is the last commit whose ProductVersion.swift names a version below this
# tree's: the history says it, so a clone without tags (CI's) finds the same commit as any other.
# A shallow clone deepens itself to reach it.
set -euo pipefail
cd "$(dirname "$0")/.."
cache=${CACHE:-/var/cache/geoattrd-ci/releases}
version_file=Sources/GeoAttrModel/ProductVersion.swift
version_at() {
    git show "$1:$version_file" 2>/dev/null | sed -n 's/^ *public static let number = "\([0-9.]*\)"$/\1/p'
}
current=$(version_at HEAD)
[ -n "$current" ] || { echo "previous-release-deb: no version in $version_file at HEAD" >&2; exit 1; }
commit=${1:-}
if [ -z "$commit" ]; then
    [ "$(git rev-parse --is-shallow-repository)" = false ] || git fetch --quiet --unshallow >&2 || true
    # The commits that changed the version file, newest first; the first whose parent names an
    # older version is where this release began, and that parent is the previous release.
    for changed in $(git log --first-parent --format=%H -- "$version_file"); do
        before=$(version_at "$changed^") || true
        if [ -n "$before" ] && dpkg --compare-versions "$before" lt "$current"; then
            commit=$(git rev-parse "$changed^"); break
        fi
    done
    [ -n "$commit" ] || { echo "previous-release-deb: the history has no release older than $current" >&2; exit 1; }
fi
commit=$(git rev-parse --verify --quiet "$commit^{commit}") || { echo "previous-release-deb: no commit $1 in this clone" >&2; exit 1; }
release=$(version_at "$commit")
[ -n "$release" ] || { echo "previous-release-deb: $commit has no $version_file" >&2; exit 1; }
tag=v$release
dir=$cache/$tag-$commit
arch=$(dpkg --print-architecture)
deb=$dir/geoattrd_${tag#v}_$arch.deb
if [ ! -f "$deb" ]; then
    echo "previous-release-deb: building $release ($commit) in $dir/src (once; some 3 minutes)" >&2
    rm -rf "$dir"
    mkdir -p "$dir/src"
    git archive "$commit" | tar -x -C "$dir/src"
    # The release's make-deb.sh writes its geoattrd package first. It gets no world index: the
    # index of this tree may be of a format the release cannot read, and only the daemon's
    # package is kept.
    built=$(cd "$dir/src" && GEODATA_CACHE="$dir/no-index" bash scripts/make-deb.sh "$dir/out" | head -n 1)
    cp "$built" "$deb.partial"
    mv "$deb.partial" "$deb"
    # The build tree is several gigabytes; the package is what is kept.
    rm -rf "$dir/src" "$dir/out"
fi
echo "$deb"
