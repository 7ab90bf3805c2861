#!/usr/bin/env bash
# Tests geoattrd-geocoder as a user installs it: builds the wheel (scripts/build-wheel.sh),
# installs it into a virtual environment with pyarrow, pandas, pyspark and duckdb 1.5.5 (the
# spatial extension's version), runs the tests (the Arrow door against geoattrctl lookup --batch,
# bad input, a refused index, two processes on one mapping, a DuckDB query and a Spark local[2]
# job), then the DuckDB test again with the newest duckdb. The venvs and the downloaded packages
# live in PYTHON_VENV_CACHE (default /var/cache/geoattrd-ci/python), outside the clone.
# The batch lookup it compares with is the release build of geoattrctl, built here, or
# GEOATTRD_TEST_GEOATTRCTL=PATH (CI passes the package's).
#
#   bash integrations/geocoder/test.sh             # extra arguments go to pytest
#
# Uses the world index when one is built (scripts/lib/world-index.sh), else a small one the tests
# build; as root on a fresh Debian 12 it installs Java (openjdk-17-jre-headless) when missing.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root"
pins="pyarrow==26.0.1 pandas==2.3.3 pyspark==4.1.1 pytest==9.0.3"
duckdb_oldest=1.5.5
duckdb_newest=2.0.1

if ! command -v java >/dev/null; then
    [ "$(id -u)" -eq 0 ] || { echo "geocoder test: Spark needs Java: apt-get install openjdk-17-jre-headless (as root)" >&2; exit 1; }
    echo "geocoder test: apt-get install -y openjdk-17-jre-headless" >&2
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends openjdk-17-jre-headless >/dev/null
fi

if [ -z "${GEOATTRD_TEST_GEOATTRCTL:-}" ]; then
    swift build -c release -j 1 --product geoattrctl >&2
    GEOATTRD_TEST_GEOATTRCTL=$root/.build/release/geoattrctl
fi
[ -x "$GEOATTRD_TEST_GEOATTRCTL" ] || { echo "geocoder test: GEOATTRD_TEST_GEOATTRCTL=$GEOATTRD_TEST_GEOATTRCTL is not an executable" >&2; exit 1; }
export GEOATTRD_TEST_GEOATTRCTL=$(realpath "$GEOATTRD_TEST_GEOATTRCTL")
source scripts/lib/world-index.sh
if [ -f "$world_index" ]; then export GEOATTRD_TEST_INDEX=$world_index; fi
wheel=$(bash scripts/build-wheel.sh .build-wheel/out | tail -n 1)
wheel=$(realpath "$wheel")

source scripts/lib/python-venv.sh
cd "$here"
# shellcheck disable=SC2086
main=$(cached_venv test-venv "$wheel" $pins "duckdb==$duckdb_oldest")
"$main" -m pytest -q -p no:cacheprovider "$@"
newest=$(cached_venv duckdb-newest-venv "$wheel" pyarrow==26.0.1 numpy==2.4.6 pytest==9.0.3 "duckdb==$duckdb_newest")
"$newest" -m pytest -q -p no:cacheprovider tests/test_engines.py tests/test_shrunk_index.py -k duckdb "$@"
