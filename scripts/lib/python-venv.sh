# shellcheck shell=bash
# Sourced: the Python environments of the tests and benchmarks (the back office's, the
# OpenTelemetry integration's, the format consumers', the API conformance's), in
# PYTHON_VENV_CACHE (default /var/cache/geoattrd-ci/python), outside the clone: CI clones afresh
# each run, and PyPI is asked only when a pin changes.

# venv_python: Debian's python3 (not one earlier on PATH), able to make virtual environments
# (as root, python3-venv is installed when missing).
venv_python() {
    local python=/usr/bin/python3
    [ -x "$python" ] || python=$(command -v python3)
    if ! "$python" -c 'import venv, ensurepip' 2>/dev/null; then
        [ "$(id -u)" -eq 0 ] || { echo "python-venv: $python cannot make virtual environments: apt-get install python3-venv (as root)" >&2; return 1; }
        DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 python3-venv >/dev/null
    fi
    echo "$python"
}

# cached_venv NAME WHEEL PINS...: prints the python of the venv NAME holding PINS (made once per
# set of pins, the packages downloaded into the cache's wheels/ first) and WHEEL (when not "-"),
# reinstalled every time, as a user installs it. Under a lock: CI may make two at once.
cached_venv() {
    local name=$1 wheel=$2 cache=${PYTHON_VENV_CACHE:-/var/cache/geoattrd-ci/python} python
    shift 2
    python=$(venv_python)
    local dir=$cache/$name
    mkdir -p "$cache"
    # Each step checked: set -e does not reach into a subshell whose status is tested, and a
    # venv marked made after a failed step would stay broken until a pin changes.
    (
        flock 8 || exit 1
        [ "$(cat "$dir/.pins" 2>/dev/null)" != "$python $*" ] || exit 0
        rm -rf "$dir" && mkdir -p "$cache/wheels" && "$python" -m venv "$dir" &&
            "$dir/bin/python" -m pip download -q --disable-pip-version-check -d "$cache/wheels" "$@" >&2 &&
            "$dir/bin/python" -m pip install -q --disable-pip-version-check --find-links "$cache/wheels" "$@" >&2 &&
            echo "$python $*" >"$dir/.pins"
    ) 8>"$cache/.lock-$name" || { echo "python-venv: making the venv $dir failed" >&2; return 1; }
    [ "$wheel" = - ] || "$dir/bin/python" -m pip install -q --disable-pip-version-check --no-deps --force-reinstall "$wheel" >&2
    echo "$dir/bin/python"
}
