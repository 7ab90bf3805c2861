#!/usr/bin/env bash
# Builds the back office's wheel, geoattrd-geocoder: the geoattrd_geocoder package
# (integrations/geocoder) with libgeoattrd_geocoder.so beside it, the geocoder targets behind a C
# interface with the Swift runtime linked in, so that `pip install` of the file is all a machine
# without Swift needs. The wheel's platform tag names the newest glibc symbol the library uses.
#   bash scripts/build-wheel.sh OUTDIR     prints the wheel's path
# The Python tools that make the wheel (setuptools, wheel) live in a venv in PYTHON_VENV_CACHE
# (default /var/cache/geoattrd-ci/python), outside the clone (scripts/lib/python-venv.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: scripts/build-wheel.sh OUTDIR}
mkdir -p "$out"
out=$(realpath "$out")
scratch=.build-wheel
tool_pins="setuptools==84.2.1 wheel==0.48.0"

# Only the C interface is exported: the Swift runtime inside stays private to the library.
swift build -c release -j 1 --product geoattrd_geocoder --scratch-path "$scratch" -Xswiftc -static-stdlib \
    -Xlinker --version-script="$PWD/integrations/geocoder/exports.map" -Xlinker --gc-sections >&2
library=$scratch/release/libgeoattrd_geocoder.so

stage=$scratch/wheel
rm -rf "$stage"
mkdir -p "$stage"
cp -r integrations/geocoder/pyproject.toml integrations/geocoder/setup.py integrations/geocoder/README.md integrations/geocoder/src "$stage/"
strip -o "$stage/src/geoattrd_geocoder/libgeoattrd_geocoder.so" "$library"

glibc=$(objdump -T "$library" | sed -n 's/.*GLIBC_\([0-9][0-9.]*\).*/\1/p' | sort -V | tail -n 1)
[ -n "$glibc" ] || { echo "build-wheel: no glibc symbol version in $library" >&2; exit 1; }
platform=manylinux_${glibc//./_}_$(uname -m)

source scripts/lib/python-venv.sh
# shellcheck disable=SC2086
tools=$(cached_venv wheel-tools - $tool_pins)
"$tools" -m pip wheel -q --disable-pip-version-check --no-deps --no-build-isolation -w "$stage/dist" "$stage" >&2
built=$(ls "$stage"/dist/geoattrd_geocoder-*.whl)
# The library needs no particular Python: any CPython 3 loads it with ctypes.
"$tools" -m wheel tags --remove --python-tag py3 --abi-tag none --platform-tag "$platform" "$built" >&2
wheel=$(ls "$stage"/dist/geoattrd_geocoder-*-py3-none-"$platform".whl)
cp "$wheel" "$out/"
echo "$out/$(basename "$wheel")"
