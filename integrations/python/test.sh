#!/usr/bin/env bash
# Tests geoattrd-opentelemetry against the real daemon, twice: with the newest and with the
# oldest opentelemetry-sdk it claims to support, each in its own virtual environment under
# .build-python/venv/ (kept between runs; remade when a pin changes).
#
#   bash integrations/python/test.sh            # both SDK versions
#   bash integrations/python/test.sh -k resource   # extra arguments go to pytest
#
# Needs the daemon built (swift build: .build/debug/geoattrd, or GEOATTRD_TEST_DAEMON=PATH).
# On a fresh Debian 12, as root, it installs python3-venv (and strace, for the syscall test)
# with apt-get when they are missing.
set -euo pipefail

SDK_NEWEST=1.45.2
SDK_OLDEST=1.18.0   # the first with OTEL_EXPERIMENTAL_RESOURCE_DETECTORS; its logs SDK has emit(LogData)
PYTEST=9.0.3
SETUPTOOLS=84.2.1   # builds the package in the venv (no isolated build environment to fetch)

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
venvs=$root/.build-python/venv
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

if [[ -z ${PYTHON:-} && ! -x /usr/bin/python3 ]] && ! command -v python3 >/dev/null; then
  apt_install python3 python3-venv || { echo "test.sh: no python3" >&2; exit 1; }
fi
if [[ -n ${PYTHON:-} ]]; then
  python=$PYTHON
elif [[ -x /usr/bin/python3 ]]; then
  python=/usr/bin/python3   # Debian's, not a python3 earlier on PATH
else
  python=$(command -v python3)
fi
# Debian ships ensurepip (which python -m venv needs) in python3-venv.
if ! "$python" -c 'import venv, ensurepip' 2>/dev/null; then
  apt_install python3-venv || true
  if ! "$python" -c 'import venv, ensurepip' 2>/dev/null; then
    echo "test.sh: $python cannot make virtual environments: apt-get install python3-venv (as root)" >&2
    exit 1
  fi
fi
if ! command -v strace >/dev/null; then
  apt_install strace || echo "test.sh: no strace: the syscall test will be skipped" >&2
fi
if [[ ! -x $GEOATTRD_TEST_DAEMON ]]; then
  echo "test.sh: no daemon at $GEOATTRD_TEST_DAEMON: run swift build first (or set GEOATTRD_TEST_DAEMON)" >&2
  exit 1
fi

# Makes (or reuses) the venv for one SDK version; installs the package from the work tree.
prepare() {
  local sdk=$1 venv=$venvs/sdk-$1
  local pins="opentelemetry-api==$sdk opentelemetry-sdk==$sdk pytest==$PYTEST setuptools==$SETUPTOOLS"
  if [[ ! -x $venv/bin/python || "$(cat "$venv/.pins" 2>/dev/null)" != "$python $pins" ]]; then
    rm -rf "$venv"
    mkdir -p "$venvs"
    "$python" -m venv "$venv"
    # shellcheck disable=SC2086
    "$venv/bin/python" -m pip install -q --disable-pip-version-check $pins
    echo "$python $pins" >"$venv/.pins"
  fi
  # The package as a user installs it (not editable), fresh from the work tree every run.
  "$venv/bin/python" -m pip install -q --disable-pip-version-check --no-deps --force-reinstall --no-build-isolation "$here"
  rm -rf "$here/build" "$here/src/"*.egg-info
}

status=0
for sdk in "$SDK_NEWEST" "$SDK_OLDEST"; do
  prepare "$sdk"
  echo "== opentelemetry-sdk $sdk ($("$venvs/sdk-$sdk/bin/python" --version))"
  (cd "$here" && "$venvs/sdk-$sdk/bin/python" -m pytest -q -p no:cacheprovider -W ignore::DeprecationWarning tests "$@") \
    || status=1
done
exit $status
