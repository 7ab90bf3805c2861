#!/usr/bin/env bash
# Builds the packages and inspects them: the files geoattrd's must carry (and not: the world
# index is geoattrd-geodata's), the documentation under /usr/share/doc/geoattrd and the pages the
# units' Documentation= name, its Depends against the libraries its binaries load, the
# binaries' footprint (scripts/check-footprint.sh), the sizes; geoattrd-geodata's file and
# relations when the index was built; then, as root on a machine that may be changed (CI),
# installs them and purges them and checks nothing is left.
set -euo pipefail
cd "$(dirname "$0")/.."
deb='' geodata=''
while read -r path; do
    case ${path##*/} in
    geoattrd_*.deb) deb=$path ;;
    geoattrd-geodata_*.deb) geodata=$path ;;
    esac
done < <(bash scripts/make-deb.sh dist)
[ -n "$deb" ] || { echo "check-deb: make-deb.sh wrote no geoattrd package" >&2; exit 1; }
for package in "$deb" $geodata; do
    echo "package: $package ($(du -k "$package" | cut -f1) KiB, installed $(dpkg-deb -f "$package" Installed-Size) KiB)"
done
contents=$(dpkg-deb -c "$deb")
for path in ./usr/bin/geoattrd ./usr/bin/geoattrctl ./usr/lib/systemd/system/geoattrd.service \
    ./usr/lib/systemd/system/geoattrd.socket ./usr/lib/systemd/system/geoattrd-gpsd.socket \
    ./usr/lib/systemd/system/geoattrd-gpsd.service ./usr/lib/systemd/system/geoattrd-metrics.socket \
    ./usr/lib/systemd/system/geoattrd-metrics-proxy.socket ./usr/lib/systemd/system/geoattrd-metrics-proxy.service \
    ./usr/lib/systemd/system/geoattrd-gpsd-guard.service ./usr/lib/systemd/system/geoattrd-metrics-guard.service \
    ./usr/lib/geoattrd/port-guard \
    ./usr/lib/sysusers.d/geoattrd.conf ./usr/lib/tmpfiles.d/geoattrd.conf \
    ./etc/geoattrd/geoattrd.yaml ./usr/share/geoattrd/; do
    grep -q " $path\$" <<<"$contents" || { echo "check-deb: $path is missing" >&2; exit 1; }
done
# What is linked in, and the notices its licences require.
copyright=$(dpkg-deb --fsys-tarfile "$deb" | tar -xO ./usr/share/doc/geoattrd/copyright)
for notice in 'libgps (from' 'libyaml (from' 'Runtime Library Exception' '==== swift-nio ===='; do
    grep -qF "$notice" <<<"$copyright" || { echo "check-deb: /usr/share/doc/geoattrd/copyright lacks $notice" >&2; exit 1; }
done
echo "/usr/share/doc/geoattrd/copyright: $(grep -c '^==== ' <<<"$copyright") components; Static-Built-Using: $(dpkg-deb -f "$deb" Static-Built-Using)"
! grep -q ' ./usr/share/geoattrd/world.gidx$' <<<"$contents" || { echo "check-deb: geoattrd carries the world index" >&2; exit 1; }
# The documentation, as the tree lays it out, uncompressed and readable by all: README.md,
# CHANGELOG.md, docs/ (the documents and the OpenAPI document) and every example.
documents=(README.md CHANGELOG.md RELIABILITY.md docs/*.md docs/openapi.yaml)
mapfile -d '' -O ${#documents[@]} documents < <(find examples -type f ! -path '*/__pycache__/*' ! -name '*.pyc' ! -name '*~' ! -name '.*' -print0)
for file in "${documents[@]}"; do
    line=$(grep " ./usr/share/doc/geoattrd/$file\$" <<<"$contents" || true)
    [ -n "$line" ] || { echo "check-deb: /usr/share/doc/geoattrd/$file is missing" >&2; exit 1; }
    [ "${line%% *}" = -rw-r--r-- ] || { echo "check-deb: /usr/share/doc/geoattrd/$file is not 0644: $line" >&2; exit 1; }
done
! grep -q ' ./usr/share/doc/geoattrd/.*\.gz$' <<<"$contents" || { echo "check-deb: a document in /usr/share/doc/geoattrd is compressed" >&2; exit 1; }
echo "/usr/share/doc/geoattrd: ${#documents[@]} documents (README.md, CHANGELOG.md, RELIABILITY.md, docs/, examples/), 0644, uncompressed"
printf '%s\n' "$contents" | awk '{printf "%10s %s\n", $3, $6}' | grep -v '/$'

# The binaries as shipped: footprint, and every library they load comes from a package in Depends.
unpacked=$(mktemp -d)
trap 'rm -rf "$unpacked"' EXIT
dpkg-deb -x "$deb" "$unpacked"
bash scripts/check-footprint.sh "$unpacked/usr/bin/geoattrd" "$unpacked/usr/bin/geoattrctl"
# Every Documentation= of the units shipped, and of the example units among the documents, leads
# to a page the package puts on the device.
pages=()
for unit in "$unpacked"/usr/lib/systemd/system/* $(find "$unpacked/usr/share/doc/geoattrd/examples" -name '*.service' -o -name '*.path' -o -name '*.socket'); do
    for page in $(sed -n 's/^Documentation=//p' "$unit"); do
        case $page in
        man:*\([1-8]\)) name=${page#man:} section=${name##*(} section=${section%)} name=${name%(*}
            target=/usr/share/man/man$section/$name.$section.gz ;;
        file://*) target=${page#file://} ;;
        file:*) target=${page#file:} ;;
        *) echo "check-deb: ${unit#"$unpacked"}: Documentation=$page is neither a manual page nor a file" >&2; exit 1 ;;
        esac
        [ -f "$unpacked$target" ] || { echo "check-deb: ${unit#"$unpacked"}: Documentation=$page: $target is not in the package" >&2; exit 1; }
        pages+=("$page")
    done
done
echo "Documentation= of the units and the example units: $(printf '%s\n' "${pages[@]}" | sort -u | paste -sd ' ') (all in the package)"
depends=$(dpkg-deb -f "$deb" Depends)
depended=$(sed 's/ *([^)]*)//g; s/ *[,|] */\n/g' <<<"$depends")
for library in $(readelf -d "$unpacked/usr/bin/geoattrd" "$unpacked/usr/bin/geoattrctl" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort -u); do
    owner=$(dpkg -S "*/$library" 2>/dev/null | head -n 1 | cut -d: -f1 || true)
    if [ -z "$owner" ]; then
        echo "check-deb: $library (NEEDED) belongs to no Debian package" >&2
        exit 1
    fi
    grep -qxF "$owner" <<<"$depended" || { echo "check-deb: Depends lacks $owner (for $library): $depends" >&2; exit 1; }
done
echo "Depends covers the libraries the binaries load: $depends"

if [ -n "$geodata" ]; then
    dpkg-deb -c "$geodata" | grep -q ' ./usr/share/geoattrd/world.gidx$' || { echo "check-deb: $geodata lacks world.gidx" >&2; exit 1; }
    format=$(sed -n 's/^ *public static let version: UInt32 = \([0-9][0-9]*\)$/\1/p' Sources/GeoIndex/IndexFormat.swift)
    [ "$(dpkg-deb -f "$geodata" Architecture)" = all ] || { echo "check-deb: $geodata is not Architecture: all" >&2; exit 1; }
    [ "$(dpkg-deb -f "$geodata" Provides)" = "geoattrd-index-format-$format" ] ||
        { echo "check-deb: $geodata does not provide geoattrd-index-format-$format" >&2; exit 1; }
    dpkg-deb -f "$geodata" Provides Breaks Replaces
else
    echo "check-deb: no geoattrd-geodata package (no world index built): its checks skipped"
fi
if [ "$(id -u)" -eq 0 ] && [ "${CI:-}" = "true" ]; then
    before=$(mktemp); after=$(mktemp)
    # What a package's files and maintainer scripts may touch: the system's directories, without
    # the caches and logs that other processes on the machine write meanwhile (CI's background
    # builds and set-ups, a developer's editor): a change there is no package's doing.
    list() {
        local roots=() root
        for root in /etc /usr /var /opt /srv /bin /sbin /lib /lib32 /lib64 /libx32; do
            [ -d "$root" ] && [ ! -L "$root" ] && roots+=("$root")
        done
        find "${roots[@]}" -xdev \( -path /var/cache -o -path /var/log -o -path /var/tmp -o -path "$PWD" \) -prune -o -print 2>/dev/null | sort
    }
    list >"$before"
    # shellcheck disable=SC2086
    dpkg -i "$deb" $geodata >/dev/null
    getent passwd geoattrd >/dev/null || { echo "check-deb: the geoattrd user was not created" >&2; exit 1; }
    /usr/bin/geoattrd --check-config >/dev/null
    # shellcheck disable=SC2046
    dpkg --purge geoattrd $([ -z "$geodata" ] || echo geoattrd-geodata) >/dev/null
    list >"$after"
    if ! diff "$before" "$after"; then
        echo "check-deb: dpkg --purge left the files above behind" >&2
        exit 1
    fi
    ! getent passwd geoattrd >/dev/null || { echo "check-deb: the geoattrd user survived the purge" >&2; exit 1; }
    echo "dpkg -i then dpkg --purge: nothing left behind"
fi
