#!/usr/bin/env bash
# A Debian 13 (trixie) arm64 runtime sysroot, for running the arm64 binaries under
# qemu-aarch64-static -L against Debian 13's C library as test.sh does against Debian 12's.
# The binaries link libgps and libyaml in, so at run time they load only glibc (with libm and the
# dynamic loader), libgcc_s and libstdc++: the sysroot is libc6, libgcc-s1 and libstdc++6 with
# what they depend on, unpacked from trixie's arm64 packages with apt in a state of its own (the
# machine's apt is neither read nor changed), the way toolchain.sh makes the Debian 12 sysroot.
# Made once and kept in $arm64_cache/sysroot-trixie (scripts/arm64/common.sh); running it again
# does nothing while the recipe is the same. Prints the sysroot's path on stdout, and on stderr
# how long it took and whether it did anything.
#   scripts/arm64/sysroot-trixie.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/arm64/common.sh

runtime_packages=(libc6 libgcc-s1 libstdc++6)
sysroot=$arm64_cache/sysroot-trixie
state=

build() {
    local recipe="trixie arm64 runtime: ${runtime_packages[*]}; merged /usr; links relative"
    done_with "$sysroot/.geoattrd-recipe" "$recipe" && return 0
    state=built
    mkdir -p "$arm64_cache" "$arm64_debs"
    rm -rf "$sysroot.new"
    mkdir -p "$sysroot.new/usr"
    # Debian 13's packages ship their files under /usr alone (the dynamic loader as
    # /usr/lib/ld-linux-aarch64.so.1); a Debian 13 system reaches them through its merged-/usr
    # links, as the binaries do (their interpreter is /lib/ld-linux-aarch64.so.1).
    local dir
    for dir in bin sbin lib; do
        mkdir -p "$sysroot.new/usr/$dir"
        ln -s "usr/$dir" "$sysroot.new/$dir"
    done
    arm64_unpack_packages trixie "$sysroot.new" "${runtime_packages[@]}"
    [ -e "$sysroot.new/lib/ld-linux-aarch64.so.1" ] ||
        { echo "sysroot-trixie: no /lib/ld-linux-aarch64.so.1 in what trixie's ${runtime_packages[*]} unpack to" >&2; exit 1; }
    echo "sysroot-trixie: $unpacked_count packages from trixie arm64: $(paste -sd ' ' "$sysroot.new/.geoattrd-packages" | sed 's/ \([^ ]*\) / \1, /g')" >&2
    echo "$recipe" >"$sysroot.new/.geoattrd-recipe"
    rm -rf "$sysroot"
    mv "$sysroot.new" "$sysroot"
}

arm64_stage sysroot-trixie "Debian 13 arm64 runtime sysroot" build
echo "$sysroot"
