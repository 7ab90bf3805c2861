#!/usr/bin/env bash
# docs/openapi.yaml against the daemon just built (Tests/api/conformance.py), with schemathesis
# from PyPI in a virtual environment (scripts/lib/python-venv.sh: outside the clone, made again
# when the pinned version changes). Extra arguments go to conformance.py.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
version=4.32.5
source "$root/scripts/lib/python-venv.sh"
python=$(cached_venv schemathesis - "schemathesis==$version")
exec "$python" "$root/Tests/api/conformance.py" "${GEOATTRD_TEST_DAEMON:-$root/.build/debug/geoattrd}" "$@"
