#!/usr/bin/env bash
# What the arm64 debug test build links and runs with, beside the release toolchain
# (scripts/arm64/toolchain.sh, made first), cached under the same directory:
#   - a sid arm64 runtime sysroot: sid's C library, libgcc and libstdc++, and the dynamic Swift
#     runtime of the compiler's own build (libswiftlang:arm64: Foundation, XCTest, swift-testing),
#     with Debian 12's libgps and libyaml copied from the release sysroot, the very files the test
#     binary is linked against. The test binary runs in it under qemu-aarch64-static -L. The
#     release binaries link Swift statically and never see it; the tests need the runtime as
#     shared libraries, and Debian builds those against sid's C library only;
#   - a Swift SDK bundle for the tests: the release SDK's sysroot, headers and modules, linked
#     against that runtime instead of the static one.
# The sid packages are pinned, version and hash, in scripts/arm64/test-runtime.pins, and fetched
# once into the cache: a second run downloads nothing.
#   scripts/arm64/test-runtime.sh            make what is missing
#   scripts/arm64/test-runtime.sh --repin    write the pins anew from what sid has now
# Cold: about 15 s (sid's package lists, 23 MB, then the packages, 23 MB; 112 MB unpacked); warm:
# well under a second.
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/arm64/common.sh

pins=scripts/arm64/test-runtime.pins
runtime_apt=$arm64_cache/apt/sid-arm64-runtime
runtime_debs=$arm64_debs/sid-arm64-runtime
# Where Debian installs the dynamic Swift runtime, in the runtime sysroot as on a sid machine.
swift_lib=/usr/libexec/swift/lib/swift/linux
# The C and C++ runtime, and what Debian 12's libgps needs beyond it (libdbus). libswiftlang is
# pinned alone: its other two dependencies, libcurl and libxml2, serve FoundationNetworking and
# FoundationXML, which no test loads (the loader, binding every symbol at start, would say so).
runtime_roots=(libc6 libgcc-s1 libstdc++6 libdbus-1-3)
# The release sysroot's files that the test binary links against and must run with.
release_libraries=(libgps.so.28 libyaml-0.so.2)

# The compiler's version: the dynamic runtime must be the same build.
swift_version=$(sed -n 's/^swift_version=//p' scripts/arm64/toolchain.sh)

state=
stage() { arm64_stage test-runtime "$@"; }

# apt-get and apt-cache for sid arm64 (common.sh's arm64_apt).
runtime_apt() {
    local tool=$1
    shift
    arm64_apt "$tool" "$runtime_apt" -o APT::Architecture=arm64 -o APT::Architectures::=arm64 "$@"
}
runtime_apt_update() {
    arm64_apt_init "$runtime_apt" sid
    runtime_apt apt-get update -qq
}
# The field of a package's record in the lists, for one version.
apt_field() { runtime_apt apt-cache show "$1:arm64=$2" 2>/dev/null | sed -n "s/^$3: //p" | head -1; }
deb_file() { echo "$runtime_debs/${1}_${2//:/%3a}_arm64.deb"; }

repin() {
    runtime_apt_update
    local packages package version
    mapfile -t packages < <(runtime_apt apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts \
        --no-breaks --no-replaces --no-enhances "${runtime_roots[@]}" | grep '^[a-z0-9]' | sort -u)
    {
        echo "# sid arm64 packages of the test runtime sysroot (scripts/arm64/test-runtime.sh --repin):"
        echo "# package version sha256. libswiftlang is the compiler's version (toolchain.sh)."
        for package in "${packages[@]}" libswiftlang; do
            if [ "$package" = libswiftlang ]; then
                version=$swift_version
            else
                version=$(runtime_apt apt-cache policy "$package:arm64" | sed -n 's/^ *Candidate: //p')
            fi
            echo "$package $version $(apt_field "$package" "$version" SHA256)"
        done
    } >"$pins.new"
    if awk '!/^#/ && NF != 3 { bad = 1 } END { exit !bad }' "$pins.new"; then
        echo "test-runtime: sid lacks a package or version asked for (libswiftlang $swift_version?): see $pins.new" >&2
        exit 1
    fi
    mv "$pins.new" "$pins"
    echo "test-runtime: wrote $pins" >&2
}

pinned_debs() {
    local package version sha256 missing=() file
    while read -r package version sha256; do
        file=$(deb_file "$package" "$version")
        if [ -f "$file" ] && echo "$sha256  $file" | sha256sum -c --quiet - >/dev/null 2>&1; then continue; fi
        rm -f "$file"
        missing+=("$package $version $sha256")
    done < <(grep -v '^#' "$pins")
    [ ${#missing[@]} -gt 0 ] || return 0
    state=built
    mkdir -p "$runtime_debs"
    runtime_apt_update
    local entry available
    for entry in "${missing[@]}"; do
        read -r package version sha256 <<<"$entry"
        available=$(runtime_apt apt-cache madison "$package:arm64" 2>/dev/null | awk -F' *[|] *' '{ print $2 }' | paste -sd ' ')
        case " $available " in
        *" $version "*) ;;
        *)
            echo "test-runtime: Debian sid no longer has $package $version for arm64 (it has: ${available:-none})." >&2
            echo "test-runtime: run scripts/arm64/test-runtime.sh --repin to pin what sid has now (libswiftlang stays the" >&2
            echo "test-runtime: compiler's version, set in toolchain.sh), or put $(basename "$(deb_file "$package" "$version")"), kept from" >&2
            echo "test-runtime: an earlier run, into $runtime_debs" >&2
            exit 1
            ;;
        esac
        (cd "$runtime_debs" && runtime_apt apt-get download -qq "$package:arm64=$version")
        file=$(deb_file "$package" "$version")
        echo "$sha256  $file" | sha256sum -c --quiet - >/dev/null 2>&1 || {
            echo "test-runtime: $file is not the pinned build of $package $version: sid rebuilt it under the same version;" >&2
            echo "test-runtime: run scripts/arm64/test-runtime.sh --repin after checking" >&2
            rm -f "$file"
            exit 1
        }
    done
}

runtime_sysroot() {
    local recipe
    recipe="$(sha256sum "$pins" | cut -d' ' -f1); $(grep -E '^(libgps[0-9]+|libyaml-0-2) ' "$arm64_sysroot/.geoattrd-packages" | paste -sd ' ')"
    done_with "$arm64_runtime/.geoattrd-recipe" "$recipe" && return 0
    state=built
    local new=$arm64_runtime.new package version sha256 link library
    rm -rf "$new"
    mkdir -p "$new"
    while read -r package version sha256; do
        dpkg-deb -x "$(deb_file "$package" "$version")" "$new"
    done < <(grep -v '^#' "$pins")
    # The merged /usr's aliases come from base-files, which a runtime does not need: the loader
    # named in every binary is /lib/ld-linux-aarch64.so.1.
    for link in lib bin sbin; do [ -e "$new/$link" ] || ln -s "usr/$link" "$new/$link"; done
    # qemu resolves the sysroot's absolute links on this machine, where they point at nothing.
    while IFS= read -r -d '' link; do
        ln -sfn "$(realpath -ms --relative-to="$(dirname "$link")" "$new$(readlink "$link")")" "$link"
    done < <(find "$new" -type l -lname '/*' -print0)
    for library in "${release_libraries[@]}"; do
        cp -a "$arm64_sysroot/usr/lib/aarch64-linux-gnu/$library"* "$new/usr/lib/aarch64-linux-gnu/"
    done
    { grep -v '^#' "$pins" | cut -d' ' -f1,2; grep -E '^(libgps[0-9]+|libyaml-0-2) ' "$arm64_sysroot/.geoattrd-packages" | sed 's/$/ (Debian 12)/'; } >"$new/.geoattrd-packages"
    echo "$recipe" >"$new/.geoattrd-recipe"
    rm -rf "$arm64_runtime"
    mv "$new" "$arm64_runtime"
}

# The release SDK's sysroot and modules with the dynamic runtime: swiftc finds libswiftCore.so and
# the rest there, and the binary finds them at Debian's path, which qemu -L maps into the runtime
# sysroot (the toolchain's own rpath would name this machine's cache). The link is against
# Debian 12's C library and libstdc++, older than those the sid runtime was built for and runs
# with; lld would hold the runtime's newer symbols against them. No isoc23 shim: sid's C library
# has those functions. No cross-import overlays: Debian ships the module of _Testing_Foundation
# (Testing's additions for files that also import Foundation) but not its library, which every
# such test file would link; the tests use none of it.
test_sdk() {
    # Written anew each time, and kept only when it differs: the build need not see new files.
    local bundle=$arm64_test_sdks/$test_sdk_name.artifactbundle
    local new=$bundle.new
    rm -rf "$new"
    write_swift_sdk "$new" "$test_sdk_name" "$swift_version" \
        '"-use-ld=lld", "-no-toolchain-stdlib-rpath", "-Xfrontend", "-disable-cross-import-overlays"' \
        "\"-L\", \"$arm64_runtime$swift_lib\", \"-rpath\", \"$swift_lib\", \"--allow-shlib-undefined\""
    if diff -r "$new" "$bundle" >/dev/null 2>&1; then
        rm -rf "$new"
        return 0
    fi
    state=built
    rm -rf "$bundle"
    mv "$new" "$bundle"
}

if [ "${1:-}" = --repin ]; then
    repin
    exit 0
fi
bash scripts/arm64/toolchain.sh
total=$(arm64_now)
stage "sid arm64 runtime packages (pinned)" pinned_debs
stage "sid arm64 runtime sysroot" runtime_sysroot
stage "test SDK bundle" test_sdk
echo "test-runtime: ready in $(arm64_elapsed "$total") s: $arm64_runtime, $arm64_test_sdks" >&2
