#!/usr/bin/env python3
"""The arm64 geoattrctl, run under qemu with an arm64 sysroot, answers as the native one does: the
same points through `lookup --batch` on both, compared line by line. Floating point, byte order or
a libc of its own would show here first.

    compare-lookups.py [--save DIR | --against DIR] ARM64_GEOATTRCTL NATIVE_GEOATTRCTL INDEX SOURCES [COUNT] [SEED]

The points are lookup_points.py's (COUNT, default 200000: uniform, populated places, within 1 km
of land borders; SOURCES is the fetched geodata it reads). An answer counts as the same when its
line is byte-identical, or when only boundary_margin_m differs, by at most 1 m: the distance to
the nearest edge goes through libm, whose last bit may round differently on another
architecture or in another glibc. Exit 1 on any other difference, with the first few. The
sysroot qemu runs the arm64 binary with is GEOATTRD_ARM64_SYSROOT (default
/var/cache/geoattrd-ci/arm64/sysroot, scripts/arm64/common.sh's Debian 12 one).

--save DIR keeps the points, the native answers and the arm64 answers in DIR. --against DIR, on a
second sysroot, takes the points and the native answers from there instead of making them again
(the points take some 25 s of CPU, the native lookups some more) and compares the arm64 answers
with the native ones by the rule above, and with the first sysroot's arm64 answers by the same
rule, counting the byte-identical ones: the same binary on two C libraries.
"""

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

LOOKUP_POINTS = Path(__file__).resolve().parent / "lookup_points.py"

MARGIN_KEY = "boundary_margin_m"


def lookups(command, index, points):
    started = time.monotonic()
    # geoattrctl reads some GEOATTRD_* variables: this script's own (GEOATTRD_ARM64_SYSROOT) and
    # whatever the caller has set stay out, so that both builds answer from the same settings.
    environment = {key: value for key, value in os.environ.items() if not key.startswith("GEOATTRD_")}
    answer = subprocess.run([*command, "lookup", "--batch", "--index", index], input=points,
                            capture_output=True, check=True, env=environment)
    return answer.stdout.decode().splitlines(), time.monotonic() - started


def same_but_margin(native, arm):
    a, b = json.loads(native), json.loads(arm)
    margins = a.pop(MARGIN_KEY, None), b.pop(MARGIN_KEY, None)
    # Lines apart in their bytes but not in their margins differ in some other way (formatting).
    if a != b or margins[0] is None or margins[1] is None or margins[0] == margins[1]:
        return False
    return abs(margins[0] - margins[1]) <= 1


def compare(reference, arm, reference_name):
    """(byte-identical, margin only, differences as text) of arm's lines against reference's."""
    identical = margin_only = 0
    differences = []
    for number, (a, b) in enumerate(zip(reference, arm), start=1):
        if a == b:
            identical += 1
        elif same_but_margin(a, b):
            margin_only += 1
        else:
            differences.append(f"  point {number}:\n    {reference_name:<8}{a}\n    arm64   {b}")
    return identical, margin_only, differences


def glibc_of(sysroot):
    """The C library's own banner, as it runs under qemu: which glibc the answers came from."""
    libc = Path(sysroot) / "lib/aarch64-linux-gnu/libc.so.6"
    try:
        banner = subprocess.run(["qemu-aarch64-static", "-L", sysroot, str(libc)], capture_output=True,
                                check=True, timeout=60).stdout.decode().splitlines()
    except (OSError, subprocess.SubprocessError) as error:
        sys.exit(f"compare-lookups: {libc} does not run under qemu-aarch64-static -L {sysroot}: {error}")
    version = re.search(r"\(Debian GLIBC ([^)]+)\)|version ([0-9.]+)", banner[0] if banner else "")
    return f"glibc {version.group(1) or version.group(2)}" if version else "an unnamed glibc"


def main():
    args = sys.argv[1:]
    save = against = None
    if args and args[0] in ("--save", "--against") and len(args) > 1:
        save, against = (args[1], None) if args[0] == "--save" else (None, args[1])
        args = args[2:]
    if len(args) not in (4, 5, 6):
        sys.exit("usage: compare-lookups.py [--save DIR | --against DIR] ARM64_GEOATTRCTL NATIVE_GEOATTRCTL INDEX SOURCES [COUNT] [SEED]")
    arm, native, index, sources = args[:4]
    count = int(args[4]) if len(args) > 4 else 200_000
    seed = args[5] if len(args) > 5 else "1"
    sysroot = os.environ.get("GEOATTRD_ARM64_SYSROOT", "/var/cache/geoattrd-ci/arm64/sysroot")
    recipe = f"{count} points, seed {seed}, from {os.path.realpath(sources)}; native {os.path.realpath(native)}; index {os.path.realpath(index)}\n"
    if against:
        kept = Path(against)
        if (kept / "recipe").read_text() != recipe:
            sys.exit(f"compare-lookups: {kept} holds {(kept / 'recipe').read_text().strip()}, not {recipe.strip()}")
        points = (kept / "points").read_bytes()
        native_lines, native_seconds = (kept / "native").read_text().splitlines(), None
        first_arm_lines = (kept / "arm64").read_text().splitlines()
        first_sysroot = (kept / "sysroot").read_text().strip()
    else:
        made = subprocess.run([sys.executable, str(LOOKUP_POINTS), sources, str(count), seed],
                              capture_output=True, check=True)
        sys.stderr.write(made.stderr.decode())
        points = made.stdout
        native_lines, native_seconds = lookups([native], index, points)
    libc = glibc_of(sysroot)
    arm_lines, arm_seconds = lookups(["qemu-aarch64-static", "-L", sysroot, arm], index, points)
    if len(native_lines) != count or len(arm_lines) != count:
        sys.exit(f"compare-lookups: {count} points, but {len(native_lines)} native and {len(arm_lines)} arm64 answers")
    if save:
        kept = Path(save)
        kept.mkdir(parents=True, exist_ok=True)
        (kept / "points").write_bytes(points)
        for name, lines in (("native", native_lines), ("arm64", arm_lines)):
            (kept / name).write_text("".join(line + "\n" for line in lines))
        (kept / "sysroot").write_text(f"{sysroot} ({libc})\n")
        (kept / "recipe").write_text(recipe)
    identical, margin_only, differences = compare(native_lines, arm_lines, "native")
    countries = sum('"geo.country.iso_code"' in line for line in native_lines)
    timing = (f"native {native_seconds:.1f} s, " if native_seconds is not None else "native answers kept, ") + \
        f"arm64 under qemu {arm_seconds:.1f} s"
    summary = (f"{count} points ({countries} in a country), arm64 on {libc}: against native {identical} "
               f"byte-identical, {margin_only} with boundary_margin_m 1 m apart, {len(differences)} different")
    if against:
        same, near, apart = compare(first_arm_lines, arm_lines, "kept")
        summary += (f"; against the arm64 answers on {first_sysroot}: {same} byte-identical, {near} with "
                    f"boundary_margin_m 1 m apart, {len(apart)} different")
        differences += apart
    summary += f" ({timing})"
    if differences:
        print(f"FAIL  compare-lookups: {summary}:", *differences[:10], sep="\n", file=sys.stderr)
        sys.exit(1)
    print(f"PASS  compare-lookups: {summary}")


if __name__ == "__main__":
    main()
