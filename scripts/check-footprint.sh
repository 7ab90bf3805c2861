#!/usr/bin/env bash
# The footprint rules for the binaries a package ships, checked on them as shipped (stripped):
#   - no ICU: its data archive ("icudt", tens of MB) comes with full Foundation's
#     internationalisation and has no use in the daemon;
#   - no full Foundation (swift-corelibs-foundation), linked in or as a library. Stripping keeps
#     two marks of it: "Foundation", the name string of the module that its types' metadata
#     refer to, and mangled names that read "10Foundation" then a length
#     ("$s10Foundation8NSStringC...", in metadata and in exported symbols).
#     FoundationEssentials, which is allowed, leaves "FoundationEssentials" and
#     "20FoundationEssentials", which match neither;
#   - a size limit (MB = 10^6 bytes): 20 MB for each, their target.
#   scripts/check-footprint.sh BIN...      exit 1 if any binary breaks a rule
set -euo pipefail
max=20000000
if ! command -v strings >/dev/null || ! command -v readelf >/dev/null; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 binutils >/dev/null
fi
[ $# -gt 0 ] || { echo "usage: check-footprint.sh BIN..." >&2; exit 2; }
failures=0
for bin in "$@"; do
    size=$(stat -c %s "$bin")
    problems=()
    text=$(strings -a -n 6 "$bin")
    icu=$(grep -c icudt <<<"$text" || true)
    foundation=$(grep -cE '^Foundation$|10Foundation[0-9]' <<<"$text" || true)
    [ "$icu" -eq 0 ] || problems+=("ICU data ($icu strings naming icudt)")
    [ "$foundation" -eq 0 ] || problems+=("full Foundation ($foundation strings naming module Foundation)")
    needed=$(readelf -d "$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | grep -E '^(libFoundation|libFoundationInternationalization|lib_FoundationICU)\.so|^libicu' || true)
    [ -z "$needed" ] || problems+=("linked to ${needed//$'\n'/ }")
    [ "$size" -le "$max" ] || problems+=("$size bytes, over its limit of $max")
    if [ ${#problems[@]} -eq 0 ]; then
        printf 'footprint: ok    %s: %d bytes (%s MB), no ICU, no Foundation\n' "$bin" "$size" "$(awk -v s="$size" 'BEGIN { printf "%.1f", s / 1e6 }')"
    else
        printf 'footprint: FAIL  %s: %s\n' "$bin" "$(IFS=';'; echo "${problems[*]}" | sed 's/;/; /g')" >&2
        failures=$((failures + 1))
    fi
done
[ "$failures" -eq 0 ]
