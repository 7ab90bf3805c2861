#!/usr/bin/env bash
# The arm64 stage of CI: the arm64 package, cross-built here, checked as a package and run under
# qemu-user against the native build of the same tree, with Debian 12's C library and Debian 13's.
#   scripts/arm64/test.sh NATIVE_DEB   (the amd64 package check-deb.sh wrote, for its binaries and
#                                       its sizes; the world index and its sources come from
#                                       GEODATA_CACHE, default cache/geodata)
#   ARM64_DEB=PATH scripts/arm64/test.sh NATIVE_DEB
#                                      (checks and runs that arm64 package instead of building one:
#                                       for trying the later steps on a package made before)
# In order, each timed:
#   1. scripts/make-deb.sh --arch arm64 (the cross toolchain first, cached, with the host tools it
#      needs: qemu-user-static, file; scripts/arm64/toolchain.sh);
#   2. the package: Architecture arm64, Depends as computed, both binaries ARM aarch64, no glibc
#      symbol above Debian 12's 2.36, the footprint rules and the installed size beside amd64's;
#      the libraries the binaries load, each found inside the Debian 12 sysroot;
#   3. its Depends as apt's resolver sees them: apt-get -s install of the package from an empty
#      system, against today's bookworm and trixie arm64 package lists (kept in a state of their
#      own under the cache, updated on each run);
#   4. the lookups of the arm64 geoattrctl against the native one on 200,000 points
#      (scripts/arm64/compare-lookups.py), on the Debian 12 sysroot the toolchain links against;
#   5. the arm64 daemon under qemu, fed by gpsfake, against the native one (daemon-test.sh);
#   6. the Debian 13 arm64 runtime sysroot (sysroot-trixie.sh, cached), and the libraries the
#      binaries load, each found inside it, none on this machine;
#   7. the lookups again on Debian 13's glibc: the same points, against the native answers and the
#      Debian 12 run's;
#   8. the daemon test again on Debian 13's glibc;
#   9. the Swift test suites that do not depend on timing, as arm64 test binaries under qemu, on
#      a build of every target with Debian's Swift 6.2.3 that must print no warning in the
#      project's own code (test-suites.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/arm64/common.sh
[ $# -eq 1 ] && [ -f "$1" ] || { echo "usage: [ARM64_DEB=PATH] scripts/arm64/test.sh NATIVE_DEB" >&2; exit 64; }
native_deb=$(realpath "$1")
[ -z "${ARM64_DEB:-}" ] || [ -f "$ARM64_DEB" ] || { echo "arm64: ARM64_DEB names no file: $ARM64_DEB" >&2; exit 64; }
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
    if [ -n "${ARM64_DEB:-}" ]; then
        deb=$(realpath "$ARM64_DEB")
        echo "arm64: ARM64_DEB: $deb, not built"
    else
        deb=$(bash scripts/make-deb.sh --arch arm64 "$work/dist" | head -n 1)
    fi
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
    check_runtime "$arm64_sysroot"
}

# apt_arm64 SUITE COMMAND...: apt-get or apt-cache on SUITE's arm64 lists, with the binary caches
# kept (this machine's apt configuration may turn them off): the resolver then starts in seconds.
apt_arm64() {
    local suite=$1 tool=$2
    shift 2
    arm64_apt "$tool" "$arm64_cache/apt/depends-$suite-arm64" -o APT::Architecture=arm64 -o APT::Architectures::=arm64 \
        -o Dir::Cache::pkgcache=pkgcache.bin -o Dir::Cache::srcpkgcache=srcpkgcache.bin "$@"
}

# Depends, resolved by apt: the package installs on each release from that release's arm64
# archive, starting from an empty system, so that everything it pulls in is resolved too.
check_depends() {
    local suite answer rc failed=0 names name versions attempt
    # The first alternative of each relation, for naming what apt chose.
    mapfile -t names < <(dpkg-deb -f "$deb" Depends Pre-Depends | sed 's/^[A-Za-z-]*: //' | tr ',' '\n' |
        sed 's/|.*//; s/(.*//; s/:any//; s/[[:space:]]//g' | grep .)
    for suite in bookworm trixie; do
        arm64_apt_init "$arm64_cache/apt/depends-$suite-arm64" "$suite"
        # A mirror's hiccup is not a finding.
        for attempt in 1 2 3; do
            apt_arm64 "$suite" apt-get update -qq && break
            [ "$attempt" -lt 3 ] || { echo "FAIL  Depends: apt-get update of $suite arm64 failed 3 times"; return 1; }
            sleep 20
        done
        rc=0
        answer=$(apt_arm64 "$suite" apt-get -s install "$deb" 2>&1) || rc=$?
        versions=''
        for name in "${names[@]}"; do
            versions+="${versions:+, }$name $(sed -n "s/^Inst $name (\([^ ]*\) .*/\1/p" <<<"$answer" | head -n 1)"
        done
        if [ "$rc" -eq 0 ] && grep -q '^Inst geoattrd (.* local-deb \[arm64\])' <<<"$answer"; then
            echo "PASS  Depends on $suite arm64 (apt-get -s install, empty system): geoattrd installs with $(grep -c '^Inst ' <<<"$answer") packages; $versions"
        else
            echo "FAIL  Depends on $suite arm64: apt-get -s install exit $rc: $(grep -E '^ *(geoattrd :|Depends:|E:)' <<<"$answer" | paste -sd ' ')"
            failed=1
        fi
    done
    return "$failed"
}

# The arm64 binaries' libraries under qemu -L SYSROOT: each one the loader finds must be in the
# sysroot, for qemu takes a file it lacks from this machine. The loader's own list
# (LD_TRACE_LOADED_OBJECTS), and glibc's banner from the sysroot.
check_runtime() {
    local sysroot=$1 binary listing missing libraries
    for binary in geoattrd geoattrctl; do
        listing=$(qemu-aarch64-static -L "$sysroot" -E LD_TRACE_LOADED_OBJECTS=1 "$work/arm64/usr/bin/$binary" 2>&1) ||
            { echo "FAIL  $binary under qemu -L $sysroot: the loader says: $(paste -sd ' ' <<<"$listing")"; return 1; }
        missing=$(awk '/=> not found/ { print $1; next } /=> \// { print $3; next } /^\t\// { print $1 }' <<<"$listing" |
            while read -r path; do [ -e "$sysroot$path" ] || echo "$path"; done)
        libraries=$(awk '/=>/ { print $1; next } /^\t\// { print $1 }' <<<"$listing" | sed 's|.*/||' | paste -sd ' ')
        if [ -n "$missing" ] || grep -q 'not found' <<<"$listing" || [ -z "$libraries" ]; then
            echo "FAIL  $binary under qemu -L $sysroot: not in the sysroot: $(paste -sd ' ' <<<"$missing"); the loader says: $(paste -sd ' ' <<<"$listing")"
            return 1
        fi
        echo "PASS  $binary under qemu -L $sysroot loads $libraries, each from the sysroot"
    done
    echo "arm64: $sysroot: $(qemu-aarch64-static -L "$sysroot" "$sysroot/lib/aarch64-linux-gnu/libc.so.6" | head -n 1)"
}

trixie_runtime() {
    sysroot_trixie=$(bash scripts/arm64/sysroot-trixie.sh)
    check_runtime "$sysroot_trixie"
}

lookups=$work/lookups
stage "package (make-deb.sh)" build_package
stage "package checks" check_package
stage "Depends (apt, 12 and 13)" check_depends
stage "lookups (200,000 points)" env GEOATTRD_ARM64_SYSROOT="$arm64_sysroot" python3 scripts/arm64/compare-lookups.py --save "$lookups" \
    "$work/arm64/usr/bin/geoattrctl" "$work/native/usr/bin/geoattrctl" "$geodata/world.gidx" "$geodata/out" 200000
stage "daemon under qemu" bash scripts/arm64/daemon-test.sh "$work/arm64/usr/bin" "$work/native/usr/bin" "$geodata/world.gidx"
stage "Debian 13 sysroot, loader" trixie_runtime
stage "lookups, Debian 13 glibc" env GEOATTRD_ARM64_SYSROOT="$sysroot_trixie" python3 scripts/arm64/compare-lookups.py --against "$lookups" \
    "$work/arm64/usr/bin/geoattrctl" "$work/native/usr/bin/geoattrctl" "$geodata/world.gidx" "$geodata/out" 200000
stage "daemon, Debian 13 glibc" env GEOATTRD_ARM64_SYSROOT="$sysroot_trixie" bash scripts/arm64/daemon-test.sh \
    "$work/arm64/usr/bin" "$work/native/usr/bin" "$geodata/world.gidx"
stage "Swift 6.2.3 tests under qemu" bash scripts/arm64/test-suites.sh
printf 'arm64: %s\n' "${timings[@]}"
