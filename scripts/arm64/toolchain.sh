#!/usr/bin/env bash
# The cross toolchain that builds the arm64 package on an amd64 Debian 12 machine, from Debian's
# archive only, made once and cached (scripts/arm64/common.sh says where):
#   - Debian sid's Swift (swiftlang), in a sid amd64 chroot: the only Swift in the archive new
#     enough for swift-tools-version 6.2, and it installs in sid only (glibc 2.42, Python 3.14);
#   - a Debian 12 arm64 sysroot (glibc, libgcc and libstdc++, libgps, libyaml, headers and
#     libraries), which the binaries are linked against so that they run on Debian 12, with the
#     Swift runtime for aarch64 from sid's swiftlang:arm64;
#   - the __isoc23_* forwarders (isoc23-shim.c) that sid's runtime archives need from a glibc
#     older than 2.38;
#   - a Swift SDK bundle naming them, linking with lld.
# Each stage says how long it took and whether it did anything. Running it again does nothing
# that is done; a stage whose recipe (pinned versions, package lists, the shim) changed is done
# again.
#   scripts/arm64/toolchain.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/arm64/common.sh

# sid moves: the toolchain is pinned, compiler and runtime of one build, checked by hash. When
# sid has moved on and the cache lacks these files, set the version sid has (apt-cache policy
# swiftlang, against sid) and its hashes here, or put the files into the cache by hand.
swift_version=6.2.3-1+b1
declare -A swift_sha256=(
    [swiftlang_amd64]=7a02c790f6d74b0ea59ed315bed674165d9ca5703bb8c85f4aff38611d1b32fd
    [libswiftlang_amd64]=ed4b21c3788df21a3b2239546a9f6359c324cee581c6b51927e6ef1b62f5aaac
    [swiftlang_arm64]=bda5df23d26eec0cc7058924611b42bb27667252a0280fb490e4969dbbd975df
)
# What the binaries link against on the device: Debian 12's C library, the C++ runtime the Swift
# runtime needs, and the two C libraries the shims wrap (through pkg-config).
sysroot_packages=(libc6-dev libgcc-12-dev libstdc++-12-dev libgps-dev libyaml-dev)

mkdir -p "$arm64_cache" "$arm64_debs"
state=
stage() { arm64_stage toolchain "$@"; }

host_tools() {
    # debootstrap makes the chroot; qemu-user-static runs what is built; file tells what it is.
    local missing=() package
    for package in debootstrap qemu-user-static file; do
        dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
    done
    [ ${#missing[@]} -gt 0 ] || return 0
    state=built
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq -o DPkg::Lock::Timeout=600 --no-install-recommends "${missing[@]}" >/dev/null
}

swift_deb() { echo "$arm64_debs/${1}_${swift_version}_$2.deb"; }
# A file checked once against its pinned hash is not read again (half a gigabyte each) while it
# is older than the record of the check.
pinned() {
    local file=$1 sha256=$2
    [ -f "$file" ] || return 1
    if [ "$file.checked" -nt "$file" ] && [ "$(cat "$file.checked")" = "$sha256" ]; then return 0; fi
    echo "$sha256  $file" | sha256sum -c --quiet - >/dev/null 2>&1 || return 1
    echo "$sha256" >"$file.checked"
}

swift_debs() {
    local apt=$arm64_cache/apt/sid missing=() key file
    for key in "${!swift_sha256[@]}"; do
        file=$(swift_deb "${key%_*}" "${key##*_}")
        if pinned "$file" "${swift_sha256[$key]}"; then continue; fi
        rm -f "$file" "$file.checked"
        missing+=("$key")
    done
    [ ${#missing[@]} -gt 0 ] || return 0
    state=built
    arm64_apt_init "$apt" sid
    arm64_apt apt-get "$apt" -o APT::Architecture=amd64 -o APT::Architectures::=amd64 -o APT::Architectures::=arm64 update -qq
    for key in "${missing[@]}"; do
        local package=${key%_*} arch=${key##*_} available
        available=$(arm64_apt apt-cache "$apt" -o APT::Architecture=amd64 -o APT::Architectures::=amd64 -o APT::Architectures::=arm64 \
            madison "$package:$arch" 2>/dev/null | awk -F' *[|] *' '{ print $2 }' | paste -sd ' ')
        case " $available " in
        *" $swift_version "*) ;;
        *)
            echo "toolchain: Debian sid no longer has $package $swift_version for $arch (it has: ${available:-none})." >&2
            echo "toolchain: set swift_version and the hashes in $0 to the version sid has now (the compiler and the aarch64 runtime must be the same build)," >&2
            echo "toolchain: or put ${package}_${swift_version}_$arch.deb, kept from an earlier run, into $arm64_debs" >&2
            exit 1
            ;;
        esac
        (cd "$arm64_debs" && arm64_apt apt-get "$apt" -o APT::Architecture=amd64 -o APT::Architectures::=amd64 -o APT::Architectures::=arm64 \
            download -qq "$package:$arch=$swift_version")
        file=$(swift_deb "$package" "$arch")
        # apt names the file with the version's colon escaped; this version has none.
        [ -f "$file" ] || { echo "toolchain: apt-get download left no $file" >&2; exit 1; }
        pinned "$file" "${swift_sha256[$key]}" || {
            echo "toolchain: $file is not the pinned build of $package $swift_version: sid rebuilt it under the same version; set its hash in $0 after checking" >&2
            rm -f "$file"
            exit 1
        }
    done
}

# A stage is done when the recipe it was done with is the one asked for now.

sid_chroot() {
    local recipe="sid amd64 minbase, git; swiftlang $swift_version, libc6-dev"
    done_with "$arm64_chroot/.geoattrd-recipe" "$recipe" && return 0
    state=built
    # An interrupted debootstrap leaves a tree that a second one refuses or half-trusts.
    if [ ! -f "$arm64_chroot/.geoattrd-bootstrapped" ]; then
        rm -rf "$arm64_chroot"
        debootstrap --variant=minbase --include=git,ca-certificates sid "$arm64_chroot" "$debian_mirror" >"$arm64_cache/debootstrap.log" 2>&1 ||
            { tail -20 "$arm64_cache/debootstrap.log" >&2; echo "toolchain: debootstrap of sid failed ($arm64_cache/debootstrap.log)" >&2; exit 1; }
        touch "$arm64_chroot/.geoattrd-bootstrapped"
    fi
    # swiftlang's own dependencies come from sid as it is today; the chroot keeps them after that.
    # libc6-dev, which gcc only recommends: SwiftPM links each manifest for the chroot itself.
    in_chroot -- apt-get -o Acquire::Check-Valid-Until=false update -qq
    in_chroot -- DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends -o APT::Sandbox::User=root \
        "$arm64_debs/libswiftlang_${swift_version}_amd64.deb" "$arm64_debs/swiftlang_${swift_version}_amd64.deb" libc6-dev >/dev/null
    in_chroot -- apt-get clean
    in_chroot -- swift --version >&2
    echo "$recipe" >"$arm64_chroot/.geoattrd-recipe"
}

sysroot() {
    local recipe="bookworm arm64: ${sysroot_packages[*]}; links relative"
    done_with "$arm64_sysroot/.geoattrd-recipe" "$recipe" && return 0
    state=built
    rm -rf "$arm64_sysroot" "$arm64_sysroot.new"
    mkdir -p "$arm64_sysroot.new"
    arm64_unpack_packages bookworm "$arm64_sysroot.new" "${sysroot_packages[@]}"
    echo "toolchain: sysroot: $unpacked_count packages from bookworm arm64" >&2
    echo "$recipe" >"$arm64_sysroot.new/.geoattrd-recipe"
    mv "$arm64_sysroot.new" "$arm64_sysroot"
}

# The Swift runtime for aarch64 (modules, static archives, swiftrt.o, the Glibc module map) and
# the clang resource headers the importer reads, from the same build as the compiler.
swift_runtime() {
    local recipe="swiftlang:arm64 $swift_version" work=$arm64_cache/swiftlang-arm64.tmp
    done_with "$arm64_sysroot/usr/lib/swift/.geoattrd-recipe" "$recipe" && return 0
    state=built
    rm -rf "$work" "$arm64_sysroot/usr/lib/swift" "$arm64_sysroot/usr/lib/swift_static" "$arm64_sysroot/usr/lib/clang"
    mkdir -p "$work"
    local lib=./usr/libexec/swift/lib
    dpkg-deb --fsys-tarfile "$(swift_deb swiftlang arm64)" | tar -x -C "$work" \
        --exclude="$lib/swift/host" --exclude="$lib/swift/embedded" --exclude="$lib/swift/pm" --exclude="$lib/swift_static/embedded" \
        "$lib/swift" "$lib/swift_static" "$lib/clang"
    mv "$work/usr/libexec/swift/lib/swift" "$work/usr/libexec/swift/lib/swift_static" "$work/usr/libexec/swift/lib/clang" "$arm64_sysroot/usr/lib/"
    rm -rf "$work"
    echo "$recipe" >"$arm64_sysroot/usr/lib/swift/.geoattrd-recipe"
}

# The SDK bundle SwiftPM reads (swift build --swift-sdks-path $arm64_sdk --swift-sdk $sdk_name).
swift_sdk() {
    local bundle=$arm64_sdk/$sdk_name.artifactbundle shim=scripts/arm64/isoc23-shim.c
    local recipe
    recipe="$(sha256sum "$shim" "$0" | cut -d' ' -f1 | paste -sd ' '); swiftlang $swift_version; $arm64_cache"
    done_with "$bundle/.geoattrd-recipe" "$recipe" && return 0
    state=built
    rm -rf "$bundle"
    mkdir -p "$bundle/aarch64"
    in_chroot --bind-ro "$PWD/scripts/arm64" -- \
        clang --target=aarch64-unknown-linux-gnu --sysroot="$arm64_sysroot" -O2 -fPIC -Wall -Werror -c "$PWD/$shim" -o "$bundle/aarch64/isoc23-shim.o"
    # lld links: sid's BFD ld refuses --icf=safe and sid has no gold. The shim's object is one
    # more input of every link.
    write_swift_sdk "$bundle" "$sdk_name" "$swift_version" '"-use-ld=lld"' "\"$bundle/aarch64/isoc23-shim.o\""
    echo "$recipe" >"$bundle/.geoattrd-recipe"
}

total=$(arm64_now)
stage "host tools" host_tools
stage "Swift packages (sid, pinned $swift_version)" swift_debs
stage "sid chroot with swiftlang" sid_chroot
stage "Debian 12 arm64 sysroot" sysroot
stage "Swift runtime for aarch64" swift_runtime
stage "isoc23 shim and SDK bundle" swift_sdk
echo "toolchain: ready in $(arm64_elapsed "$total") s: $arm64_cache" >&2
