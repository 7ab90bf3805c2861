#!/usr/bin/env bash
# Builds the Debian packages: release binaries with the Swift standard library linked in (the
# device needs no Swift toolchain), position-dependent and stripped, installed by
# scripts/install.sh into a staging root with the documentation (README.md, CHANGELOG.md, docs/
# and examples/ under /usr/share/doc/geoattrd, in the tree's layout), with maintainer scripts
# that create the user and groups, lay out /run/geoattrd (and repair the layout of an older
# version on upgrade), enable the sockets (the Prometheus ones stay the operator's to enable), and
# purge cleanly (saying whose group memberships go with the groups). The world index goes into a
# package of its own: the daemon and the data are upgraded apart (a new daemon does not download
# the index again), and a device that serves coordinates only, or carries an index of its own,
# need not install it.
#   scripts/make-deb.sh [--arch arm64] [OUTDIR]   (default: dist/) writes
#     OUTDIR/geoattrd_VERSION_ARCH.deb          daemon, geoattrctl, units, configuration
#     OUTDIR/geoattrd-geodata_FORMAT.DATA_all.deb  /usr/share/geoattrd/world.gidx, only when
#                                               $GEODATA_CACHE/world.gidx (default
#                                               cache/geodata) has been built
#   and prints the paths of the packages it wrote on stdout, one a line, geoattrd's first
#   (everything else goes to stderr).
#   --arch arm64 on an amd64 machine cross-builds geoattrd_VERSION_arm64.deb (Debian 12 and 13) with
#   the toolchain of scripts/arm64/ (see scripts/arm64/toolchain.sh) and writes geoattrd only:
#   geoattrd-geodata, the same for every architecture, comes from the native build.
set -euo pipefail
cd "$(dirname "$0")/.."
# The world index the geodata package carries.
source scripts/lib/world-index.sh
# The release --version prints (ProductVersion.number).
version=${VERSION:-$(sed -n 's/^ *public static let number = "\([0-9.]*\)"$/\1/p' Sources/GeoAttrModel/ProductVersion.swift)}
[ -n "$version" ] || { echo "make-deb: no ProductVersion.number in Sources/GeoAttrModel/ProductVersion.swift" >&2; exit 1; }
arch=$(dpkg --print-architecture)
cross=
if [ "${1:-}" = --arch ]; then
    case ${2:-}/$arch in
    "$arch/$arch") ;;
    arm64/amd64) cross=arm64 ;;
    *) echo "make-deb: --arch ${2:-}: this machine ($arch) builds $arch, and arm64 when it is amd64" >&2; exit 64 ;;
    esac
    arch=$2
    shift 2
fi
out=${1:-dist}
scratch=.build-package
# The daemon's code layout of the native build, which the arm64 build reuses.
native_order=$PWD/$scratch/geoattrd.order
# The index format the daemon of this tree writes and reads newest (IndexFormat.version).
format=$(sed -n 's/^ *public static let version: UInt32 = \([0-9][0-9]*\)$/\1/p' Sources/GeoIndex/IndexFormat.swift)
case $format in
'' | *[!0-9]*) echo "make-deb: no IndexFormat.version in Sources/GeoIndex/IndexFormat.swift" >&2; exit 1 ;;
esac
# The first geoattrd version that reads each index format: geoattrd-geodata breaks older ones.
# A new format needs its line here; the build stops until it has one.
first_reader() {
    case $1 in
    4) echo 0.1.0 ;;
    5) echo 0.2.0 ;;
    6) echo 0.4.0 ;;
    *) return 1 ;;
    esac
}
# geoattrd-geodata's own version: the index format, then the data's release (DATA_RELEASE in
# scripts/fetch-geodata.sh), so that a new index ships without a new geoattrd and sorts after
# every earlier one (format 6's 6.2026.1 after 0.4.0, the last version shared with geoattrd).
data_release=${GEODATA_RELEASE:-$(sed -n 's/^DATA_RELEASE=\([0-9][0-9.]*\)$/\1/p' scripts/fetch-geodata.sh)}
[ -n "$data_release" ] || { echo "make-deb: no DATA_RELEASE in scripts/fetch-geodata.sh" >&2; exit 1; }
geodata_version=$format.$data_release
reader=$(first_reader "$format") || { echo "make-deb: index format $format: add the first geoattrd version that reads it to first_reader" >&2; exit 1; }
# geoattrd carried /usr/share/geoattrd/world.gidx itself before 0.2.0: geoattrd-geodata takes the
# file over from those versions (Replaces) and is never unpacked beside one (Breaks).
index_moved=0.2.0~
breaks=$index_moved
if dpkg --compare-versions "$reader" gt "$breaks"; then breaks=$reader; fi

[ -n "$cross" ] || bash scripts/install-deps.sh >&2
# How the binaries are linked (measured with Benchmarks/daemon/bench-footprint.sh against a PIE
# with the toolchain's defaults, and against the Swift runtime as shared libraries):
#   -no-pie: a position-dependent executable (ET_EXEC). A static PIE carries some 60,000
#     relative relocations (1.5 MB of .rela.dyn, read at every start) that the dynamic loader
#     applies to .data.rel.ro and .data, Swift metadata full of absolute pointers: each page
#     written becomes a private dirty copy (580 KiB of .data.rel.ro, 180 KiB of .data), and the
#     relocations' own pages stay resident. Linked at a fixed address, nothing is relocated. The
#     executable's image loses address randomisation (libraries, heap and stacks keep theirs): the
#     daemon listens on a Unix socket only, sandboxed in its unit.
#   --no-export-dynamic: the toolchain's static-stdlib link exports every symbol of the program's
#     own modules (2.2 MB of .dynsym, .dynstr and hash table per binary), and every symbol lookup
#     of the shared libraries at start goes through that table first. Nothing looks them up;
#     stripped, crash stacks then carry addresses only: symbolise them with the unstripped
#     binaries of the same build (build-id).
#   -Osize and --icf=safe (identical functions folded): 1.2 MB less per binary. The daemon does
#   one lookup per fix; geoattrctl's batch lookups are the only hot loop that pays, and the
#   benchmarks in docs/performance.md are of the development build.
#   --icf=all on amd64 (gold): functions are folded even where their address is taken, 0.67 MB
#   less for geoattrd. Two different functions then may have one address; nothing in the
#   program compares functions by address (Swift has no function identity; key paths, which
#   would, are used here to reach properties, never as keys). The arm64 link (lld) keeps
#   --icf=safe: lld's --icf=all also folds read-only data, and its binaries fit as they are.
#   -function-sections: each function of the Swift modules built here in a section of its own
#     (the toolchain's runtime libraries are built that way already), so that the linker's
#     --gc-sections drops the unreferenced functions of a module it links, not only whole
#     files: 0.57 MB less for geoattrd.
#   --section-ordering-file (geoattrd only, from scripts/layout/profile-daemon.sh): the kernel
#     maps the cached pages around every code page a process touches (64 KiB at a time), so the
#     6,000 functions the daemon runs, spread over 13 MB of code, kept 10.3 MB of it resident;
#     laid out together, 5.9 MB. What stays spread is the runtime's C, C++ and Swift code that
#     its archives built without a section per function (2.4 MB of it runs).
#   The Swift runtime as shared libraries (17 MB, shared by both binaries) makes the packages
#   smaller but the daemon bigger in memory: no other process shares those pages on a device.
icf=all
[ -z "$cross" ] || icf=safe
#   libgps and libyaml linked in (their static archives, through the pkg-config files of
#     scripts/lib/static-pkgconfig.sh): Debian 12 has libgps.so.28 and Debian 13 libgps.so.30 only,
#     so a binary that loads libgps starts on one of them; linked in, one package serves both.
#     libgps's D-Bus reader stays out (Sources/CGPS/without_dbus.c): no libdbus either.
link=(-Xcc -DCGPS_STATIC_LIBGPS --static-swift-stdlib -Xswiftc -Osize -Xswiftc -Xfrontend -Xswiftc -function-sections -Xlinker -no-pie -Xlinker --no-export-dynamic -Xlinker "--icf=$icf")
# What runs the built binaries here (install.sh's completions, the index's copyright).
runner=
source scripts/lib/static-pkgconfig.sh
if [ -z "$cross" ]; then
    static_pkgconfig "/usr/lib/$(gcc -print-multiarch)/pkgconfig" "$PWD/$scratch/static-pkgconfig" "$PWD/$scratch/static-lib" objcopy
    export PKG_CONFIG_PATH=$PWD/$scratch/static-pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
    # SwiftPM does not see the archives change: the binaries are linked anew every time.
    rm -f "$scratch/release/geoattrd" "$scratch/release/geoattrctl"
    swift build -c release "${link[@]}" -Xlinker -Map="$PWD/$scratch/geoattrd.map" --scratch-path "$scratch" --product geoattrd >&2
    swift build -c release "${link[@]}" --scratch-path "$scratch" --product geoattrctl >&2
    bin=$(swift build -c release "${link[@]}" --scratch-path "$scratch" --show-bin-path)
    # The functions the daemon runs, laid out next to each other: profiled on the binary just
    # linked, then linked again in that order (the objects stay; only the link runs again).
    bash scripts/layout/profile-daemon.sh "$bin/geoattrd" "$PWD/$scratch/geoattrd.map" "$PWD/$scratch/geoattrd.order" >&2
    swift build -c release "${link[@]}" -Xlinker --section-ordering-file="$PWD/$scratch/geoattrd.order" --scratch-path "$scratch" --product geoattrd >&2
else
    source scripts/arm64/common.sh
    scratch=$arm64_scratch
    bash scripts/arm64/toolchain.sh >&2
    static_pkgconfig "$arm64_sysroot/usr/lib/aarch64-linux-gnu/pkgconfig" "$arm64_cache/static-pkgconfig" \
        "$arm64_sysroot/usr/lib/aarch64-linux-gnu" in_chroot -- llvm-objcopy
    rm -f "$scratch/release/geoattrd" "$scratch/release/geoattrctl"
    # Not GEOATTRD_*: geoattrd reads those as configuration, and install.sh runs it.
    cross_build=(env ARM64_PKG_CONFIG_PATH="$arm64_cache/static-pkgconfig" bash scripts/arm64/swift-build.sh -c release "${link[@]}" --scratch-path "$scratch")
    # The daemon cannot be profiled here (the tracer is amd64's, and qemu-user has no ptrace): its
    # layout is the amd64 build's, when this tree has one, for lld (--symbol-ordering-file, by
    # symbol: lld has no --section-ordering-file). The functions the daemon runs are mostly the
    # same on both (of 7,712 in amd64's order, 7,587 were found in arm64's geoattrd, laid out in
    # 55 pieces of 64 KiB where amd64's take 67), and a symbol missing here is skipped.
    order=()
    mkdir -p "$scratch"
    if [ -s "$native_order" ]; then
        sed -n 's/^\.text\.\([^.].*\)$/\1/p' "$native_order" >"$scratch/geoattrd.symbols"
        order=(-Xlinker --symbol-ordering-file="$scratch/geoattrd.symbols" -Xlinker --no-warn-symbol-ordering)
        echo "make-deb: geoattrd laid out in the order of $native_order" >&2
    else
        echo "make-deb: no $native_order (from make-deb.sh on amd64): geoattrd linked without a layout" >&2
    fi
    "${cross_build[@]}" "${order[@]}" --product geoattrd >&2
    "${cross_build[@]}" --product geoattrctl >&2
    bin=$("${cross_build[@]}" --show-bin-path 2>/dev/null)
    runner="qemu-aarch64-static -L $arm64_sysroot"
fi
for binary in geoattrd geoattrctl; do
    readelf -h "$bin/$binary" | grep -q 'Type: *EXEC' || { echo "make-deb: $bin/$binary is not a position-dependent executable" >&2; exit 1; }
done
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bin"
if [ -z "$cross" ]; then
    cp "$bin/geoattrd" "$bin/geoattrctl" "$stage/bin/"
    strip --strip-unneeded "$stage/bin/geoattrd" "$stage/bin/geoattrctl"
else
    # The host's strip reads no arm64 ELF; the toolchain's llvm-objcopy does, in the chroot, which
    # sees the cache only.
    for binary in geoattrd geoattrctl; do
        in_chroot -- llvm-objcopy --strip-unneeded "$bin/$binary" "$scratch/$binary.stripped"
        cp "$scratch/$binary.stripped" "$stage/bin/$binary"
    done
fi
# No glibc symbol newer than Debian 12's (2.36): the loader would refuse the binary there
# (deb_depends stops the build on one).
source scripts/lib/deb-depends.sh
depends=$(deb_depends "$stage/bin/geoattrd" "$stage/bin/geoattrctl")
# What is linked in, by source package and version (Static-Built-Using:): a security update to
# one of them reaches the device by a rebuild of this package (docs/building.md, "Linked in").
static_built_using=$(source scripts/lib/deb-copyright.sh; static_sources "$arch") && [ -n "$static_built_using" ] ||
    { echo "make-deb: the versions of the libgps and libyaml linked in could not be read" >&2; exit 1; }
root="$stage/root"
DESTDIR="$root" PREFIX=/usr BINDIR="$stage/bin" WITH_INDEX=0 RUNNER="$runner" bash scripts/install.sh
# The licences and notices of what the binaries link in.
(source scripts/lib/deb-copyright.sh; deb_copyright "$arch" "$scratch/checkouts") >"$root/usr/share/doc/geoattrd/copyright"
chmod 0644 "$root/usr/share/doc/geoattrd/copyright"
mkdir -p "$root/DEBIAN"
installed_kb=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
maintainer="geoattrd maintainers <maintainers@users.noreply.a-seed-01aa94ce.example>"
# geoattrd recommends the index rather than depending on it: without one it serves the location
# attributes alone, by design (a device that needs no names, an image that carries its own index
# at index.path, CI, which builds none). apt installs recommended packages by default, so a plain
# "apt install geoattrd" gets it; another package providing the same index format (a regional
# index) may stand in for it. Which formats go with which daemon is geoattrd-geodata's Breaks.
cat >"$root/DEBIAN/control" <<CONTROL
Package: geoattrd
Version: $version
Architecture: $arch
Maintainer: $maintainer
Depends: $depends, systemd (>= 242)
Static-Built-Using: $static_built_using
Recommends: gpsd, geoattrd-geodata | geoattrd-index-format-$format
Suggests: nftables
Installed-Size: $installed_kb
Section: misc
Priority: optional
Description: OpenTelemetry geo.* attributes for Linux edge devices
 Takes one-shot fixes from gpsd on a timer, reverse-geocodes them offline
 (ISO 3166-1 country, ISO 3166-2 region, locality, postal code), caches the
 result and serves the attributes over a Unix socket to telemetry sidecars.
 The world index the geocoder reads is in geoattrd-geodata.
CONTROL
echo "/etc/geoattrd/geoattrd.yaml" >"$root/DEBIAN/conffiles"
# What belongs in /run/geoattrd, for the postinst's clean-up (scripts/lib/run-dir-allowlist.sh):
# the sockets the units bind there, the files and directories tmpfiles.d makes there. Read from
# the units and tmpfiles.d shipped, so that a new one is kept from the first package that has it.
run_sockets=$(sed -n 's|^ListenStream=/run/geoattrd/\([^/]*\)$|\1|p' systemd/*.socket | sort -u | paste -sd ' ')
run_files=$(awk '$1 == "f" && $2 ~ /^\/run\/geoattrd\/[^\/]+$/ { print substr($2, 15) }' systemd/geoattrd.tmpfiles | paste -sd ' ')
run_dirs=$(awk '$1 == "d" && $2 ~ /^\/run\/geoattrd\/[^\/]+$/ { print substr($2, 15) }' systemd/geoattrd.tmpfiles | paste -sd ' ')
for name in $run_sockets $run_files $run_dirs; do
    case $name in
    *[!A-Za-z0-9._-]*) echo "make-deb: /run/geoattrd/$name: the postinst takes plain names only" >&2; exit 1 ;;
    esac
done
case " $run_sockets " in *" geoattrd.sock "*) ;; *) echo "make-deb: no ListenStream=/run/geoattrd/geoattrd.sock in systemd/*.socket" >&2; exit 1 ;; esac
{
    printf '#!/bin/sh\nset -e\n'
    printf "run_dir=/run/geoattrd\nrun_sockets='%s'\nrun_files='%s'\nrun_dirs='%s'\n" "$run_sockets" "$run_files" "$run_dirs"
    cat scripts/lib/run-dir-allowlist.sh
    cat scripts/lib/deb-policy.sh scripts/lib/deb-postinst.sh
} >"$root/DEBIAN/postinst"
{
    printf '#!/bin/sh\nset -e\n'
    cat scripts/lib/deb-policy.sh scripts/lib/deb-prerm.sh
} >"$root/DEBIAN/prerm"
{
    printf '#!/bin/sh\nset -e\n'
    cat scripts/lib/deb-postrm.sh
} >"$root/DEBIAN/postrm"
chmod 0755 "$root/DEBIAN/postinst" "$root/DEBIAN/prerm" "$root/DEBIAN/postrm"
mkdir -p "$out"
deb="$out/geoattrd_${version}_${arch}.deb"
dpkg-deb --root-owner-group --build "$root" "$deb" >&2
written=("$deb")

if [ -n "$cross" ]; then
    echo "make-deb: geoattrd-geodata (Architecture: all) is the native build's" >&2
elif [ -f "$world_index" ]; then
    data="$stage/geodata"
    install -d "$data/DEBIAN" "$data/usr/share/geoattrd" "$data/usr/share/doc/geoattrd-geodata"
    install -m 0644 "$world_index" "$data/usr/share/geoattrd/world.gidx"
    # The sources, their versions and licences, and the attribution they require, as the index
    # itself records them.
    "$stage/bin/geoattrctl" index info "$world_index" >"$data/usr/share/doc/geoattrd-geodata/copyright"
    chmod 0644 "$data/usr/share/doc/geoattrd-geodata/copyright"
    cat >"$data/DEBIAN/control" <<CONTROL
Package: geoattrd-geodata
Version: $geodata_version
Architecture: all
Multi-Arch: foreign
Maintainer: $maintainer
Provides: geoattrd-index-format-$format
Breaks: geoattrd (<< $breaks)
Replaces: geoattrd (<< $index_moved)
Enhances: geoattrd
Installed-Size: $(du -sk --exclude=DEBIAN "$data" | cut -f1)
Section: misc
Priority: optional
Description: world index for geoattrd's offline reverse geocoder
 The index geoattrd maps from /usr/share/geoattrd/world.gidx (format $format):
 countries, ISO 3166-2 regions, localities and postal codes of the world.
 Geodata: GeoNames (CC BY 4.0), (c) OpenStreetMap contributors (ODbL),
 Natural Earth, iso-codes (LGPL-2.1+): the sources and
 their attribution are in /usr/share/doc/geoattrd-geodata/copyright.
CONTROL
    # No maintainer scripts: dpkg puts the file in place by rename, and the daemon, which watches
    # the index's directory (shipped by geoattrd, so it stays when this package is removed), sees
    # the file appear or be replaced (IN_MOVED_TO), validates it and swaps it in, or keeps the
    # index it has.
    geodata="$out/geoattrd-geodata_${geodata_version}_all.deb"
    dpkg-deb --root-owner-group --build "$data" "$geodata" >&2
    written+=("$geodata")
else
    echo "make-deb: geoattrd-geodata skipped: no world index in $world_index (scripts/fetch-geodata.sh && scripts/build-world-index.sh)" >&2
fi
printf '%s\n' "${written[@]}"
