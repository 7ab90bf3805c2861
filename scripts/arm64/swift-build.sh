#!/usr/bin/env bash
# swift build for Debian 12 arm64: the cross toolchain's SwiftPM (scripts/arm64/toolchain.sh,
# made first when it is not) run in its sid chroot on this tree, with the Swift SDK for aarch64.
#   scripts/arm64/swift-build.sh [SWIFT BUILD ARGUMENTS...]
# The scratch path is GEOATTRD_ARM64_SCRATCH (scripts/arm64/common.sh) unless the arguments name
# one, which must be under the cache too. The tree is mounted at the path it has here, not
# copied: the build sees exactly the files of the work tree, paths in arguments and in SwiftPM's
# answers (--show-bin-path) are the same inside and out, and the dependencies are pinned by the
# tree's Package.resolved, which SwiftPM reads, or writes when there is none yet, as a native
# build does (nothing else is written into the checkout).
# Package dependencies come from where git finds them here: the url.*.insteadOf rules of the
# system's and root's git configuration are copied into the chroot, and a rule's local
# directory is mounted read-only at its path.
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/arm64/common.sh
bash scripts/arm64/toolchain.sh

binds=(--bind "$PWD")
config=$arm64_chroot/etc/gitconfig
: >"$config"
while read -r key value; do
    case $key in
    url.*.insteadof) ;;
    *) continue ;;
    esac
    git config --file "$config" --add "$key" "$value"
    base=${key#url.}
    base=${base%.insteadof}
    if [ -d "$base" ]; then binds+=(--bind-ro "$(cd "$base" && pwd -P)"); fi
done < <(git config --system --get-regexp '^url\.' 2>/dev/null; git config --global --get-regexp '^url\.' 2>/dev/null)

arguments=("$@")
scratch=
for ((i = 0; i < ${#arguments[@]}; i++)); do
    case ${arguments[i]} in
    --scratch-path) scratch=${arguments[i + 1]:-} ;;
    --scratch-path=*) scratch=${arguments[i]#--scratch-path=} ;;
    esac
done
if [ -z "$scratch" ]; then
    scratch=$arm64_scratch
    arguments+=(--scratch-path "$scratch")
fi
case $(realpath -m "$scratch")/ in
"$(realpath -m "$arm64_cache")"/*) ;;
*) echo "swift-build: the scratch path $scratch is not under $arm64_cache" >&2; exit 1 ;;
esac
mkdir -p "$scratch"

# libgps and libyaml through pkg-config, from the sysroot: without these SwiftPM finds no .pc
# files, says so as a warning, and the link fails later. ARM64_PKG_CONFIG_PATH, a directory
# under the cache, comes first (make-deb.sh's static link: scripts/lib/static-pkgconfig.sh).
in_chroot "${binds[@]}" -- \
    PKG_CONFIG_SYSROOT_DIR="$arm64_sysroot" \
    PKG_CONFIG_PATH="${ARM64_PKG_CONFIG_PATH:+$ARM64_PKG_CONFIG_PATH:}$arm64_sysroot/usr/lib/aarch64-linux-gnu/pkgconfig:$arm64_sysroot/usr/share/pkgconfig" \
    swift build --package-path "$PWD" --swift-sdks-path "$arm64_sdk" --swift-sdk "$sdk_name" \
    "${arguments[@]}"
