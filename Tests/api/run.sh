#!/usr/bin/env bash
# docs/openapi.yaml against the daemon just built (Tests/api/conformance.py), with schemathesis
# from PyPI in a virtual environment under .build-python/schemathesis (kept between runs; made
# again when the pinned version changes). Extra arguments go to conformance.py.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
venv=$root/.build-python/schemathesis
version=4.32.5
if ! "$venv/bin/python" -c "import sys, schemathesis; sys.exit(schemathesis.__version__ != '$version')" 2>/dev/null; then
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet "schemathesis==$version"
fi
exec "$venv/bin/python" "$root/Tests/api/conformance.py" "${GEOATTRD_TEST_DAEMON:-$root/.build/debug/geoattrd}" "$@"
