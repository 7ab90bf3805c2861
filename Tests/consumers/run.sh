#!/usr/bin/env bash
# The OTel and env formats against the readers that come from PyPI, over the escaping corpus
# rendered by geoattrd's own encoders (the escaping-corpus tool, built by swift build):
# opentelemetry-sdk's OTEL_RESOURCE_ATTRIBUTES parser, with the newest and the oldest SDK the
# Python integration supports, and python-dotenv (Tests/consumers/readers.py says what each must
# read back). Virtual environments consumers-sdk-VERSION (scripts/lib/python-venv.sh: outside the
# clone, made again when a pin changes).
#
#   bash Tests/consumers/run.sh [COUNT [SEED]]     # default: 400 random values and the shapes
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
corpus_tool=${ESCAPING_CORPUS:-$root/.build/debug/escaping-corpus}
DOTENV=1.2.4
SDKS=(1.45.2 1.18.0)   # as integrations/python/test.sh
source "$root/scripts/lib/python-venv.sh"

if [[ ! -x $corpus_tool ]]; then
    echo "consumers: no $corpus_tool: run swift build first (or set ESCAPING_CORPUS)" >&2
    exit 1
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$corpus_tool" "$work/corpus" "$@"

status=0
readers=(otel dotenv)
for sdk in "${SDKS[@]}"; do
    # shellcheck disable=SC2086
    python=$(cached_venv "consumers-sdk-$sdk" - opentelemetry-api==$sdk opentelemetry-sdk==$sdk python-dotenv==$DOTENV)
    "$python" "$root/Tests/consumers/readers.py" "$work/corpus" "${readers[@]}" || status=1
    # python-dotenv is the same in both environments: once is enough.
    readers=(otel)
done
exit $status
