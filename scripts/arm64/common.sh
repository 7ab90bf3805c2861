# Sourced by the arm64 scripts: where the cross toolchain lives and how to run a command in it.
# Everything here is fetched or built, never part of the tree: it lives under the cache
# directory, outside the clone, and survives a fresh checkout.
#   GEOATTRD_ARM64_CACHE   default /var/cache/geoattrd-ci/arm64
#   GEOATTRD_DEBIAN_MIRROR default http://deb.debian.org/debian
#   GEOATTRD_ARM64_SCRATCH SwiftPM's scratch path for the arm64 builds, under the cache; default
#                          $GEOATTRD_ARM64_CACHE/build
arm64_cache=${GEOATTRD_ARM64_CACHE:-/var/cache/geoattrd-ci/arm64}
debian_mirror=${GEOATTRD_DEBIAN_MIRROR:-http://deb.debian.org/debian}
# Debian sid's amd64 system, where the Swift toolchain installs (it wants sid's glibc and Python).
arm64_chroot=$arm64_cache/sid-amd64
# Debian 12's arm64 headers and libraries, which the binaries are linked against and run with.
arm64_sysroot=$arm64_cache/sysroot
arm64_sdk=$arm64_cache/sdk
arm64_debs=$arm64_cache/debs
arm64_scratch=${GEOATTRD_ARM64_SCRATCH:-$arm64_cache/build}
sdk_name=geoattrd-aarch64-debian12
# The arm64 test build's runtime and SDK (scripts/arm64/test-runtime.sh): sid's C library and
# dynamic Swift runtime, which the debug test binaries run with under qemu, and the SDK linking them.
arm64_runtime=$arm64_cache/runtime-sysroot
arm64_test_sdks=$arm64_cache/sdk-tests
test_sdk_name=geoattrd-aarch64-tests

arm64_now() { echo "${EPOCHREALTIME/,/.}"; }
arm64_elapsed() { awk -v a="$1" -v b="$(arm64_now)" 'BEGIN { printf "%.1f", b - a }'; }

# in_chroot [--bind PATH | --bind-ro PATH]... -- COMMAND...
# Runs COMMAND in the sid chroot, as root with a clean environment (leading NAME=VALUE words of
# COMMAND add to it), in a mount namespace of its own: the mounts end with the command, and
# nothing is left to unmount after a failure. The cache and each PATH are seen inside at the paths
# they have outside, so that a path in an argument, in the SDK bundle or in SwiftPM's answers
# means the same on both sides.
in_chroot() {
    local binds=(--bind "$arm64_cache")
    while [ "$1" != -- ]; do
        binds+=("$1" "$2")
        shift 2
    done
    shift
    # Debian's swiftlang keeps clang, lld and llvm-objcopy beside swift, out of /usr/bin.
    local environment=(HOME=/root PATH=/usr/libexec/swift/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8)
    unshare --mount --propagation private -- bash -c '
        set -euo pipefail
        root=$1
        shift
        mount -t proc proc "$root/proc"
        mount --rbind /dev "$root/dev"
        while [ "$1" != -- ]; do
            mode=$1 path=$2
            shift 2
            mkdir -p "$root$path"
            mount --bind "$path" "$root$path"
            [ "$mode" = --bind ] || mount -o remount,bind,ro "$root$path"
        done
        shift
        exec chroot "$root" /usr/bin/env -i "$@"
    ' in-chroot "$arm64_chroot" "${binds[@]}" -- "${environment[@]}" "$@"
}

# arm64_stage LABEL NAME COMMAND...: runs a stage of a set-up script and says how long it took
# and whether it did anything (COMMAND sets state=built when it did).
arm64_stage() {
    local label=$1 name=$2 start
    shift 2
    start=$(arm64_now)
    state=cached
    "$@"
    echo "$label: $name: $(arm64_elapsed "$start") s ($state)" >&2
}

# done_with FILE RECIPE: the stage whose recipe FILE records is done, with this recipe.
done_with() { [ -f "$1" ] && [ "$(cat "$1")" = "$2" ]; }

# arm64_apt TOOL DIR [ARGUMENT...]: apt-get or apt-cache against another suite and architecture,
# with state of its own in DIR under the cache (arm64_apt_init): the machine's own sources, lists
# and package database are neither read nor changed. A mirror that is a snapshot serves Release
# files past their Valid-Until; what they list is still checked by hash.
arm64_apt() {
    local tool=$1 dir=$2
    shift 2
    "$tool" -o Dir::Etc::sourcelist="$dir/sources.list" -o Dir::Etc::sourceparts="$dir/sources.list.d" \
        -o Dir::Etc::preferencesparts="$dir/preferences.d" -o Dir::State::Lists="$dir/lists" -o Dir::Cache="$dir/cache" \
        -o Dir::State::status="$dir/status" -o Debug::NoLocking=1 -o APT::Sandbox::User=root \
        -o Acquire::Check-Valid-Until=false "$@"
}
# arm64_apt_init DIR SUITE: DIR's sources name SUITE of the mirror.
arm64_apt_init() {
    local dir=$1 suite=$2
    mkdir -p "$dir/lists/partial" "$dir/cache/archives/partial" "$dir/sources.list.d" "$dir/preferences.d"
    echo "deb $debian_mirror $suite main" >"$dir/sources.list"
    touch "$dir/status"
}

# arm64_unpack_packages SUITE TARGET PACKAGE...: the arm64 packages named, and every package
# they depend on (Depends and Pre-Depends, recursively), from SUITE, downloaded with apt in a
# state of its own under the cache and unpacked into TARGET (which must exist), their absolute
# links made relative (glibc's development links point at /lib/...: in a sysroot they would point
# into this machine, where the linker and qemu would find no arm64 file or one of another
# system), and TARGET/.geoattrd-packages listing what went in. Sets unpacked_count.
arm64_unpack_packages() {
    local suite=$1 target=$2 apt=$arm64_cache/apt/$1-arm64 debs=$arm64_debs/$1-arm64 deb link
    shift 2
    local arch=(-o APT::Architecture=arm64 -o APT::Architectures::=arm64) packages
    arm64_apt_init "$apt" "$suite"
    arm64_apt apt-get "$apt" "${arch[@]}" update -qq
    mapfile -t packages < <(arm64_apt apt-cache "$apt" "${arch[@]}" depends --recurse --no-recommends --no-suggests \
        --no-conflicts --no-breaks --no-replaces --no-enhances "$@" | grep '^[a-z0-9]' | sort -u)
    rm -rf "$debs"
    mkdir -p "$debs"
    (cd "$debs" && arm64_apt apt-get "$apt" "${arch[@]}" download -qq "${packages[@]}")
    for deb in "$debs"/*.deb; do
        dpkg-deb -x "$deb" "$target"
    done
    while IFS= read -r -d '' link; do
        ln -sfn "$(realpath -ms --relative-to="$(dirname "$link")" "$target$(readlink "$link")")" "$link"
    done < <(find "$target" -type l -lname '/*' -print0)
    for deb in "$debs"/*.deb; do dpkg-deb -f "$deb" Package Version | paste -sd ' '; done |
        sed 's/^Package: //; s/ Version: / /' >"$target/.geoattrd-packages"
    unpacked_count=${#packages[@]}
}

# write_swift_sdk BUNDLE NAME VERSION SWIFTC_OPTIONS LINKER_OPTIONS: a Swift SDK bundle for
# aarch64 on the Debian 12 sysroot; the options are JSON lists' contents, as the toolset takes them.
write_swift_sdk() {
    local bundle=$1 name=$2 version=$3 swiftc=$4 linker=$5
    mkdir -p "$bundle/aarch64"
    cat >"$bundle/info.json" <<JSON
{
  "schemaVersion": "1.0",
  "artifacts": {
    "$name": {
      "type": "swiftSDK",
      "version": "$version",
      "variants": [{ "path": "aarch64", "supportedTriples": ["x86_64-unknown-linux-gnu", "x86_64-pc-linux-gnu"] }]
    }
  }
}
JSON
    cat >"$bundle/aarch64/swift-sdk.json" <<JSON
{
  "schemaVersion": "4.0",
  "targetTriples": {
    "aarch64-unknown-linux-gnu": {
      "sdkRootPath": "$arm64_sysroot",
      "swiftResourcesPath": "$arm64_sysroot/usr/lib/swift",
      "swiftStaticResourcesPath": "$arm64_sysroot/usr/lib/swift_static",
      "toolsetPaths": ["toolset.json"]
    }
  }
}
JSON
    cat >"$bundle/aarch64/toolset.json" <<JSON
{
  "schemaVersion": "1.0",
  "swiftCompiler": { "extraCLIOptions": [$swiftc] },
  "linker": { "extraCLIOptions": [$linker] }
}
JSON
}
