# Sourced: the back office's Python environments, in BACKOFFICE_CACHE (default
# /var/cache/geoattrd-ci/backoffice), outside the clone.

# backoffice_python: Debian's python3 (not one earlier on PATH), able to make virtual
# environments (as root, python3-venv is installed when missing).
backoffice_python() {
    local python=/usr/bin/python3
    [ -x "$python" ] || python=$(command -v python3)
    if ! "$python" -c 'import venv, ensurepip' 2>/dev/null; then
        [ "$(id -u)" -eq 0 ] || { echo "backoffice: $python cannot make virtual environments: apt-get install python3-venv (as root)" >&2; return 1; }
        DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null
    fi
    echo "$python"
}

# backoffice_venv NAME WHEEL PINS...: prints the python of the venv NAME holding PINS (made once
# per set of pins, the packages downloaded into the cache's wheels/ first) and WHEEL (when not
# "-"), reinstalled every time, as a user installs it.
backoffice_venv() {
    local name=$1 wheel=$2 cache=${BACKOFFICE_CACHE:-/var/cache/geoattrd-ci/backoffice} python
    shift 2
    python=$(backoffice_python)
    local dir=$cache/$name
    if [ "$(cat "$dir/.pins" 2>/dev/null)" != "$python $*" ]; then
        rm -rf "$dir"
        mkdir -p "$cache/wheels"
        "$python" -m venv "$dir"
        "$dir/bin/python" -m pip download -q --disable-pip-version-check -d "$cache/wheels" "$@" >&2
        "$dir/bin/python" -m pip install -q --disable-pip-version-check --find-links "$cache/wheels" "$@" >&2
        echo "$python $*" >"$dir/.pins"
    fi
    [ "$wheel" = - ] || "$dir/bin/python" -m pip install -q --disable-pip-version-check --no-deps --force-reinstall "$wheel" >&2
    echo "$dir/bin/python"
}
