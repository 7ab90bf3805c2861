# shellcheck shell=bash
# Sourced: static_pkgconfig PCDIR OUTDIR ARCHIVEDIR OBJCOPY... writes into OUTDIR the pkg-config
# files of libgps and libyaml found in PCDIR, changed to link static archives: Debian's
# libyaml.a, and libgps-geoattrd.a, a copy of Debian's libgps.a that this writes into ARCHIVEDIR.
# A build whose PKG_CONFIG_PATH puts OUTDIR first links both libraries in: a binary built against
# Debian 12's libgps.so.28 would not start on Debian 13, which has libgps.so.30 only
# (docs/building.md, "Linked in").
#   ARCHIVEDIR is either the directory of Debian's libgps.a (a sysroot's: the files' own -L finds
#   the copy there), or any other, which the libgps file then names with -L.
#   OBJCOPY is a command that reads and writes archives of the target's architecture (binutils'
#   objcopy natively, the cross toolchain's llvm-objcopy for arm64).
# The copy's only change: libgps's own strlcpy (os_compat.o, for systems without it) becomes
# weak. The static Swift runtime's libdispatch defines strlcpy too, and two strong definitions
# stop the link; weak, the runtime's is taken (the same BSD function). objcopy weakens the
# archive's references to strlcpy as well, which then pull no member: os_compat.o is still
# linked, for strlcat, which libgps's socket code calls (strlcat must stay strong: weakened, its
# references would pull nothing and resolve to address 0).
static_pkgconfig() {
    local from=$1 to=$2 archives=$3 pc library libdir search=
    shift 3
    mkdir -p "$to" "$archives"
    for pc in libgps yaml-0.1; do
        [ -f "$from/$pc.pc" ] || { echo "static-pkgconfig: no $from/$pc.pc (libgps-dev, libyaml-dev)" >&2; return 1; }
    done
    grep -q -- '-lgps\b' "$from/libgps.pc" || { echo "static-pkgconfig: $from/libgps.pc links no -lgps" >&2; return 1; }
    grep -q -- '-lyaml\b' "$from/yaml-0.1.pc" || { echo "static-pkgconfig: $from/yaml-0.1.pc links no -lyaml" >&2; return 1; }
    # The archives beside the .pc files' directory (LIBDIR/pkgconfig).
    libdir=$(dirname "$from")
    "$@" --weaken-symbol=strlcpy "$libdir/libgps.a" "$archives/libgps-geoattrd.a"
    [ "$(realpath "$archives")" = "$(realpath "$libdir")" ] || search="-L$(realpath "$archives") "
    sed "s|-lgps\\b|$search-l:libgps-geoattrd.a|" "$from/libgps.pc" >"$to/libgps.pc"
    sed 's/-lyaml\b/-l:libyaml.a/' "$from/yaml-0.1.pc" >"$to/yaml-0.1.pc"
}
