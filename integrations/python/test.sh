#!/usr/bin/env bash
# Tests geoattrd-opentelemetry against the real daemon, twice: with the newest and with the
# oldest opentelemetry-sdk it claims to support, each in its own virtual environment
# (scripts/lib/python-venv.sh: outside the clone, remade when a pin changes).
#
#   bash integrations/python/test.sh            # both SDK versions
#   bash integrations/python/test.sh -k resource   # extra arguments go to pytest
#
# Needs the daemon built (swift build: .build/debug/geoattrd, or GEOATTRD_TEST_DAEMON=PATH).
# On a fresh Debian 12, as root, it installs python3-venv (and strace, for the syscall test)
# with apt-get when they are missing; the venvs are made with Debian's python3.
set -euo pipefail

SDK_NEWEST=1.45.2
SDK_OLDEST=1.18.0   # the first with OTEL_EXPERIMENTAL_RESOURCE_DETECTORS; its logs SDK has emit(LogData)
PYTEST=9.0.3
SETUPTOOLS=84.2.1   # builds the package in the venv (no isolated build environment to fetch)

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
export GEOATTRD_TEST_DAEMON=${GEOATTRD_TEST_DAEMON:-$root/.build/debug/geoattrd}

apt_install() {
  if [[ $(id -u) -ne 0 ]] || ! command -v apt-get >/dev/null; then
    return 1
  fi
  echo "test.sh: apt-get install -y $*" >&2
  if [[ -z ${apt_updated:-} ]]; then
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    apt_updated=1
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

if ! command -v strace >/dev/null; then
  apt_install strace || echo "test.sh: no strace: the syscall test will be skipped" >&2
fi
if [[ ! -x $GEOATTRD_TEST_DAEMON ]]; then
  echo "test.sh: no daemon at $GEOATTRD_TEST_DAEMON: run swift build first (or set GEOATTRD_TEST_DAEMON)" >&2
  exit 1
fi

source "$root/scripts/lib/python-venv.sh"
# The venv of one SDK version (made once per set of pins, outside the clone); the package from the
# work tree, as a user installs it (not editable), every run. Prints the venv's python.
prepare() {
  local sdk=$1 python
  # shellcheck disable=SC2086
  python=$(cached_venv "otel-sdk-$sdk" - opentelemetry-api==$sdk opentelemetry-sdk==$sdk pytest==$PYTEST setuptools==$SETUPTOOLS)
  "$python" -m pip install -q --disable-pip-version-check --no-deps --force-reinstall --no-build-isolation "$here" >&2
  rm -rf "$here/build" "$here/src/"*.egg-info
  echo "$python"
}

status=0
for sdk in "$SDK_NEWEST" "$SDK_OLDEST"; do
  python=$(prepare "$sdk")
  echo "== opentelemetry-sdk $sdk ($("$python" --version))"
  (cd "$here" && "$python" -m pytest -q -p no:cacheprovider -W ignore::DeprecationWarning tests "$@") \
    || status=1
done
exit $status
