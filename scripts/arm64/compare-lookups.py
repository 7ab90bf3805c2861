#!/usr/bin/env python3
"""The arm64 geoattrctl, run under qemu with the Debian 12 arm64 sysroot, answers as the native one
does: the same points through `lookup --batch` on both, compared line by line. Floating point,
byte order or a libc of its own would show here first.

    compare-lookups.py ARM64_GEOATTRCTL NATIVE_GEOATTRCTL INDEX SOURCES [COUNT] [SEED]

The points are lookup_points.py's (COUNT, default 200000: uniform, populated places, within 1 km
of land borders; SOURCES is the fetched geodata it reads). An answer counts as the same when its
line is byte-identical, or when only boundary_margin_m differs, by at most 1 m: the distance to
the nearest edge goes through libm, whose last bit may round differently on another
architecture. Exit 1 on any other difference, with the first few. The sysroot qemu runs the arm64
binary with is GEOATTRD_ARM64_SYSROOT (default /var/cache/geoattrd-ci/arm64/sysroot,
scripts/arm64/common.sh's).
"""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

LOOKUP_POINTS = Path(__file__).resolve().parent / "lookup_points.py"

MARGIN_KEY = "boundary_margin_m"


def lookups(command, index, points):
    started = time.monotonic()
    answer = subprocess.run([*command, "lookup", "--batch", "--index", index], input=points,
                            capture_output=True, check=True)
    return answer.stdout.decode().splitlines(), time.monotonic() - started


def same_but_margin(native, arm):
    a, b = json.loads(native), json.loads(arm)
    margins = a.pop(MARGIN_KEY, None), b.pop(MARGIN_KEY, None)
    if a != b or (margins[0] is None) != (margins[1] is None):
        return False
    return margins[0] is None or abs(margins[0] - margins[1]) <= 1


def main():
    if len(sys.argv) not in (5, 6, 7):
        sys.exit("usage: compare-lookups.py ARM64_GEOATTRCTL NATIVE_GEOATTRCTL INDEX SOURCES [COUNT] [SEED]")
    arm, native, index, sources = sys.argv[1:5]
    count = int(sys.argv[5]) if len(sys.argv) > 5 else 200_000
    seed = sys.argv[6] if len(sys.argv) > 6 else "1"
    points = subprocess.run([sys.executable, str(LOOKUP_POINTS), sources, str(count), seed],
                            capture_output=True, check=True)
    sys.stderr.write(points.stderr.decode())
    sysroot = os.environ.get("GEOATTRD_ARM64_SYSROOT", "/var/cache/geoattrd-ci/arm64/sysroot")
    native_lines, native_seconds = lookups([native], index, points.stdout)
    arm_lines, arm_seconds = lookups(["qemu-aarch64-static", "-L", sysroot, arm], index, points.stdout)
    if len(native_lines) != count or len(arm_lines) != count:
        sys.exit(f"compare-lookups: {count} points, but {len(native_lines)} native and {len(arm_lines)} arm64 answers")
    identical = margin_only = 0
    differences = []
    for number, (a, b) in enumerate(zip(native_lines, arm_lines), start=1):
        if a == b:
            identical += 1
        elif same_but_margin(a, b):
            margin_only += 1
        else:
            differences.append(f"  point {number}:\n    native {a}\n    arm64  {b}")
    countries = sum('"geo.country.iso_code"' in line for line in native_lines)
    summary = (f"{count} points ({countries} in a country): {identical} byte-identical, {margin_only} "
               f"with boundary_margin_m 1 m apart, {len(differences)} different "
               f"(native {native_seconds:.1f} s, arm64 under qemu {arm_seconds:.1f} s)")
    if differences:
        print(f"compare-lookups: {summary}:", *differences[:10], sep="\n", file=sys.stderr)
        sys.exit(1)
    print(f"compare-lookups: {summary}")


if __name__ == "__main__":
    main()
