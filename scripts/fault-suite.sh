#!/usr/bin/env bash
# The fault-injection suite (RELIABILITY.md): the release build of geoattrd under gpsd, clock,
# file-system, signal and client faults, against a real gpsd fed by gpsfake. Each scenario checks
# that the daemon still runs and answers, serves the last good result or a newer one, never
# leaves a half-written cache, and holds no more descriptors, threads or children than before.
#
#   bash scripts/fault-suite.sh            every scenario
#   bash scripts/fault-suite.sh FILTER     the scenarios matching a swift test --filter
# GEOATTRD_BINARY=PATH runs that geoattrd instead of building one: CI passes the package's
# (scripts/make-deb.sh builds it before the test suite), the binary the devices run.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
if [ -n "${GEOATTRD_BINARY:-}" ]; then
    [ -x "$GEOATTRD_BINARY" ] || { echo "fault-suite: GEOATTRD_BINARY=$GEOATTRD_BINARY is not an executable" >&2; exit 1; }
    GEOATTRD_BINARY=$(realpath "$GEOATTRD_BINARY")
else
    swift build -c release --product geoattrd
    GEOATTRD_BINARY="$PWD/.build/release/geoattrd"
fi
export GEOATTRD_BINARY
echo "fault-suite: $GEOATTRD_BINARY" >&2
swift test --filter "${1:-GeoAttrdFaultTests}"
