#!/usr/bin/env bash
# The whole test suite, on a fresh Debian 12 machine as on a developer's: installs what is
# missing, builds with zero warnings in the project's own code, and runs every test (unit tests,
# and integration tests against a real gpsd fed by gpsfake).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh

log=$(mktemp)
trap 'rm -f "$log"' EXIT
swift build --build-tests 2>&1 | tee "$log"
# Swift 6 language mode, complete strict concurrency: a warning in our code fails the build.
if grep -E "^(warning:|$PWD/(Sources|Tests|Fuzz)/[^:]+:[0-9]+:[0-9]+: warning:)" "$log" | sort -u | grep .; then
    echo "test: the build printed warnings (above); fix them" >&2
    exit 1
fi

# Each target imports exactly what Package.swift declares for it; no source file or function
# grows past what a reader can hold in mind; no tracked file refers to how the project was built
# (work sessions, issue numbers, commit hashes: history is git's).
python3 scripts/check-imports.py
python3 scripts/check-shape.py
python3 scripts/check-history.py

# The example scrape configuration, alert rules and the documented PromQL join, with Prometheus's
# own tool.
promtool check config examples/prometheus/prometheus.yml
promtool check rules examples/prometheus/geoattrd.rules.yml
promtool test rules examples/prometheus/geoattrd.rules.test.yml

# The systemd units: verify must be silent, security must not regress.
bash scripts/check-units.sh

# The geocoder's tests build indexes synchronously and would hold the concurrency threads that
# the timing-sensitive gpsd and daemon tests need on a 2-core machine: they run on their own.
swift test --skip GeoIndexTests --skip GeoAttrdFaultTests
swift test --filter GeoIndexTests

# The fix engine against Debian 13's gpsd 3.25 too, on the same build: GeoAttrGPSDTests
# (GPSDFixSourceTests, FirstReportTests, and the evaluator's and shim's own tests) and
# FixCommandTests run a second time with trixie's gpsfake and gpsd (a cached tree, chrooted);
# a gpsd of another release fails each start.
bash scripts/gpsfake-trixie.sh --prepare
GEOATTRD_GPSFAKE="bash scripts/gpsfake-trixie.sh" GEOATTRD_GPSD_RELEASE=3.25 swift test --skip-build --filter GeoAttrGPSDTests --filter FixCommandTests

# The Python OpenTelemetry integration against the daemon just built, with the newest and the
# oldest opentelemetry-sdk it supports (virtual environments outside the clone: scripts/lib/python-venv.sh).
bash integrations/python/test.sh

# The back office's wheel (geoattrd-geocoder), installed as a user installs it: the Arrow door
# against geoattrctl lookup --batch, DuckDB (1.5.5 and the newest) and a Spark local[2] job.
bash integrations/geocoder/test.sh

# The OTel and env formats against the OpenTelemetry SDK's own OTEL_RESOURCE_ATTRIBUTES parser and
# python-dotenv, over the escaping corpus rendered by the product's encoders (escaping-corpus).
bash Tests/consumers/run.sh

# The API document (docs/openapi.yaml) against the daemon just built: schemathesis generates
# requests from it and every answer must match it.
bash Tests/api/run.sh

# The fault-injection suite runs the release build.
bash scripts/fault-suite.sh

# The soak benchmark's short form: memory, descriptors and threads flat under fixes and requests,
# on the geoattrd the fault-injection suite ran (its release build, or GEOATTRD_BINARY's).
python3 scripts/soak.py --binary "${GEOATTRD_BINARY:-$PWD/.build/release/geoattrd}" --fixes 100 --requests 10000 --sample-every 1
