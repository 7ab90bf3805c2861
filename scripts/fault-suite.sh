#!/usr/bin/env bash
# The fault-injection suite (RELIABILITY.md): the release build of geoattrd under gpsd, clock,
# file-system, signal and client faults, against a real gpsd fed by gpsfake. Each scenario checks
# that the daemon still runs and answers, serves the last good result or a newer one, never
# leaves a half-written cache, and holds no more descriptors, threads or children than before.
#
#   bash scripts/fault-suite.sh            every scenario
#   bash scripts/fault-suite.sh FILTER     the scenarios matching a swift test --filter
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
swift build -c release --product geoattrd
export GEOATTRD_BINARY="$PWD/.build/release/geoattrd"
swift test --filter "${1:-GeoAttrdFaultTests}"
