#!/usr/bin/env bash
# The arm64 geoattrctl, run under qemu with the Debian 12 arm64 sysroot, answers as the native one
# does: the same random points (seeded, so a difference can be looked at again) through
# `lookup --batch` on both, compared line by line. Floating point, byte order or a libc of its
# own would show here first.
#   scripts/arm64/compare-lookups.sh ARM64_GEOATTRCTL NATIVE_GEOATTRCTL INDEX [POINTS] [SEED]
# POINTS (default 5000) points uniform over the sphere, plus every whole degree of a band across
# Europe where borders are dense. Exit 1 on any difference, with the first few.
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/arm64/common.sh
[ $# -ge 3 ] || { echo "usage: compare-lookups.sh ARM64_GEOATTRCTL NATIVE_GEOATTRCTL INDEX [POINTS] [SEED]" >&2; exit 64; }
arm=$1 native=$2 index=$3 count=${4:-5000} seed=${5:-1}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
awk -v n="$count" -v seed="$seed" 'BEGIN {
    srand(seed)
    pi = atan2(0, -1)
    for (i = 0; i < n; i++) {
        z = 2 * rand() - 1
        printf "%.6f,%.6f\n", atan2(z, sqrt(1 - z * z)) * 180 / pi, 360 * rand() - 180
    }
    for (lat = 36; lat <= 60; lat++) for (lon = -10; lon <= 30; lon++) printf "%d.25,%d.75\n", lat, lon
}' >"$work/points"
start=$(arm64_now)
"$native" lookup --batch --index "$index" <"$work/points" >"$work/native"
native_seconds=$(arm64_elapsed "$start")
start=$(arm64_now)
qemu-aarch64-static -L "$arm64_sysroot" "$arm" lookup --batch --index "$index" <"$work/points" >"$work/arm64"
arm_seconds=$(arm64_elapsed "$start")
points=$(wc -l <"$work/points")
answered=$(wc -l <"$work/native")
countries=$(grep -c '"geo.country.iso_code"' "$work/native" || true)
if cmp -s "$work/native" "$work/arm64"; then
    echo "compare-lookups: $points points, $answered answers ($countries with a country), identical (native ${native_seconds} s, arm64 under qemu ${arm_seconds} s)"
else
    echo "compare-lookups: $points points: the answers differ in $(diff "$work/native" "$work/arm64" | grep -c '^<' || true) lines:" >&2
    diff "$work/native" "$work/arm64" | head -20 >&2 || true
    exit 1
fi
