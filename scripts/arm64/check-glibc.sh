#!/usr/bin/env bash
# Fails when a binary needs a newer glibc than the oldest system it is packaged for: the dynamic
# loader refuses such a binary at start ("version `GLIBC_2.38' not found"), whatever the
# package's Depends says. The cross toolchain's runtime archives come from a newer system than
# the sysroot, so a symbol of theirs can slip through the link.
#   scripts/arm64/check-glibc.sh [--max VERSION] BINARY...   (default VERSION 2.36, Debian 12)
# Prints each binary's highest GLIBC_ version on stdout ("BINARY VERSION"), and on failure the
# symbols that ask for more.
set -euo pipefail
max=2.36
if [ "${1:-}" = --max ]; then
    max=${2:?--max needs a version}
    shift 2
fi
[ $# -gt 0 ] || { echo "usage: check-glibc.sh [--max VERSION] BINARY..." >&2; exit 64; }
failed=0
for binary in "$@"; do
    # The versions the binary's version-needs section asks of glibc's libraries; readelf reads an
    # ELF file of any architecture.
    needed=$(readelf --version-info --wide "$binary" | sed -n 's/.*Name: GLIBC_\([0-9.]*\) .*/\1/p' | sort -uV)
    highest=$(tail -n1 <<<"$needed")
    echo "$binary ${highest:-none}"
    [ -n "$highest" ] || continue
    if [ "$(printf '%s\n%s\n' "$highest" "$max" | sort -V | tail -n1)" != "$max" ]; then
        echo "check-glibc: $binary needs GLIBC_$highest, more than $max:" >&2
        readelf --dyn-syms --wide "$binary" | awk -v max="$max" '
            match($8, /@GLIBC_[0-9.]+/) {
                version = substr($8, RSTART + 7, RLENGTH - 7)
                split(version, have, "."); split(max, limit, ".")
                if (have[1] + 0 > limit[1] + 0 || (have[1] + 0 == limit[1] + 0 && have[2] + 0 > limit[2] + 0)) print "  " $8
            }' | sort -u >&2
        failed=1
    fi
done
exit "$failed"
