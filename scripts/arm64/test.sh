#!/usr/bin/env bash
# The arm64 stage of CI: the Debian 12 arm64 package, cross-built here, checked as a package and
# run under qemu-user against the native build of the same tree.
#   scripts/arm64/test.sh NATIVE_DEB   (the amd64 package check-deb.sh wrote, for its binaries and
#                                       its sizes; the world index and its sources come from
#                                       GEODATA_CACHE, default cache/geodata)
# In order, each timed:
#   1. scripts/make-deb.sh --arch arm64 (the cross toolchain first, cached, with the host tools it
#      needs: qemu-user-static, file; scripts/arm64/toolchain.sh);
#   2. the package: Architecture arm64, Depends as computed, both binaries ARM aarch64, no glibc
#      symbol above Debian 12's 2.36, the footprint rules and the installed size beside amd64's;
#   3. the lookups of the arm64 geoattrctl against the native one on 200,000 points
#      (scripts/arm64/compare-lookups.py);
#   4. the arm64 daemon under qemu, fed by gpsfake, against the native one (daemon-test.sh);
#   5. the Swift test suites that do not depend on timing, as arm64 test binaries under qemu, on
#      a build of every target with Debian's Swift 6.2.3 that must print no warning in the
#      project's own code (test-suites.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/arm64/common.sh
[ $# -eq 1 ] && [ -f "$1" ] || { echo "usage: scripts/arm64/test.sh NATIVE_DEB" >&2; exit 64; }
native_deb=$(realpath "$1")
geodata=${GEODATA_CACHE:-$PWD/cache/geodata}
for needed in "$geodata/world.gidx" "$geodata/out/countries.geojson" "$geodata/out/cities.txt"; do
    [ -f "$needed" ] || { echo "arm64: no $needed (scripts/fetch-geodata.sh && scripts/build-world-index.sh)" >&2; exit 1; }
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
timings=()
stage() {
    local name=$1 start
    shift
    start=$(arm64_now)
    echo "arm64: $name" >&2
    "$@"
    timings+=("$(printf '%-28s %6s s' "$name" "$(arm64_elapsed "$start")")")
}

build_package() {
    deb=$(bash scripts/make-deb.sh --arch arm64 "$work/dist" | head -n 1)
    mkdir -p "$work/arm64" "$work/native"
    dpkg-deb -x "$deb" "$work/arm64"
    dpkg-deb -x "$native_deb" "$work/native"
}

check_package() {
    local architecture depends binary description
    architecture=$(dpkg-deb -f "$deb" Architecture)
    depends=$(dpkg-deb -f "$deb" Depends)
    [ "$architecture" = arm64 ] || { echo "arm64: $deb says Architecture: $architecture" >&2; return 1; }
    echo "arm64: $(basename "$deb"): Architecture: $architecture; Depends: $depends"
    for binary in geoattrd geoattrctl; do
        description=$(file -b "$work/arm64/usr/bin/$binary")
        case $description in
        *"ARM aarch64"*) echo "arm64: $binary: ${description%%,*}, ARM aarch64" ;;
        *) echo "arm64: $binary is not an aarch64 binary: $description" >&2; return 1 ;;
        esac
    done
    bash scripts/arm64/check-glibc.sh --max 2.36 "$work/arm64/usr/bin/geoattrd" "$work/arm64/usr/bin/geoattrctl" | sed 's/^/arm64: highest glibc symbol version: /'
    bash scripts/check-footprint.sh "$work/arm64/usr/bin/geoattrd" "$work/arm64/usr/bin/geoattrctl"
    for binary in geoattrd geoattrctl; do
        echo "arm64: $binary $(stat -c %s "$work/arm64/usr/bin/$binary") bytes, amd64 $(stat -c %s "$work/native/usr/bin/$binary")"
    done
    echo "arm64: Installed-Size $(dpkg-deb -f "$deb" Installed-Size) KiB, amd64 $(dpkg-deb -f "$native_deb" Installed-Size) KiB"
}

stage "package (make-deb.sh)" build_package
stage "package checks" check_package
stage "lookups (200,000 points)" env GEOATTRD_ARM64_SYSROOT="$arm64_sysroot" python3 scripts/arm64/compare-lookups.py \
    "$work/arm64/usr/bin/geoattrctl" "$work/native/usr/bin/geoattrctl" "$geodata/world.gidx" "$geodata/out" 200000
stage "daemon under qemu" bash scripts/arm64/daemon-test.sh "$work/arm64/usr/bin" "$work/native/usr/bin" "$geodata/world.gidx"
stage "Swift 6.2.3 tests under qemu" bash scripts/arm64/test-suites.sh
printf 'arm64: %s\n' "${timings[@]}"
