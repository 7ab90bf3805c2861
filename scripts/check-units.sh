#!/usr/bin/env bash
# Checks the systemd units: `systemd-analyze verify` must print nothing (it exits 0 on a
# misspelled option, so any output line fails), and `systemd-analyze security --offline=yes`
# must not score geoattrd.service or its gpsd relay, geoattrd-gpsd.service, worse than
# MAX_EXPOSURE (default 1.0). What each still lacks, and why, is in the README ("Hardening").
# Needs a built geoattrd (verify checks ExecStart).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(swift build --show-bin-path)/geoattrd
[ -x "$bin" ] || { echo "check-units: build geoattrd first" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp systemd/geoattrd.socket systemd/geoattrd-gpsd.socket systemd/geoattrd-gpsd.service "$work/"
sed "s|^ExecStart=/usr/bin/geoattrd|ExecStart=$bin|" systemd/geoattrd.service >"$work/geoattrd.service"
output=$(cd "$work" && systemd-analyze verify geoattrd.service geoattrd.socket geoattrd-gpsd.socket \
    geoattrd-gpsd.service 2>&1 || true)
if [ -n "$output" ]; then
    echo "check-units: systemd-analyze verify complained:" >&2
    echo "$output" >&2
    exit 1
fi
echo "systemd-analyze verify: clean (4 units)"
max=${MAX_EXPOSURE:-1.0}
for unit in geoattrd.service geoattrd-gpsd.service; do
    report=$(systemd-analyze security --offline=yes "systemd/$unit" 2>&1)
    score=$(printf '%s\n' "$report" | sed -n "s/.*Overall exposure level for $unit: \([0-9.]*\).*/\1/p")
    [ -n "$score" ] || { echo "check-units: no score for $unit:" >&2; echo "$report" >&2; exit 1; }
    echo "systemd-analyze security --offline=yes $unit: exposure $score"
    printf '%s\n' "$report" | grep '✗' || true
    python3 -c "import sys; sys.exit(0 if float('$score') <= float('$max') else 1)" ||
        { echo "check-units: $unit exposure $score is above $max" >&2; exit 1; }
done
