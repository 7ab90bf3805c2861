#!/usr/bin/env bash
# Checks the systemd units: `systemd-analyze verify` must print nothing (it exits 0 on a
# misspelled option, so any output line fails), and `systemd-analyze security --offline=yes`
# must not score the service worse than MAX_EXPOSURE. The goal is 1.0; the unit scores 1.1 because
# PrivateUsers= is off on purpose (it would map every client uid to nobody and defeat the
# peer-credential access rules) and PrivateNetwork= is impossible (gpsd is on host loopback TCP).
# Needs a built geoattrd (verify checks ExecStart).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(swift build --show-bin-path)/geoattrd
[ -x "$bin" ] || { echo "check-units: build geoattrd first" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp systemd/geoattrd.socket "$work/"
sed "s|^ExecStart=/usr/bin/geoattrd|ExecStart=$bin|" systemd/geoattrd.service >"$work/geoattrd.service"
output=$(systemd-analyze verify "$work/geoattrd.service" "$work/geoattrd.socket" 2>&1 || true)
if [ -n "$output" ]; then
    echo "check-units: systemd-analyze verify complained:" >&2
    echo "$output" >&2
    exit 1
fi
echo "systemd-analyze verify: clean"
report=$(systemd-analyze security --offline=yes systemd/geoattrd.service 2>&1)
score=$(printf '%s\n' "$report" | sed -n 's/.*Overall exposure level for geoattrd.service: \([0-9.]*\).*/\1/p')
echo "systemd-analyze security --offline=yes: exposure $score"
printf '%s\n' "$report" | grep '✗' || true
max=${MAX_EXPOSURE:-1.1}
python3 -c "import sys; sys.exit(0 if float('$score') <= float('$max') else 1)" || { echo "check-units: exposure $score is above $max" >&2; exit 1; }
