# shellcheck shell=bash
# Sourced by scripts/make-deb.sh: what the binaries link in, for the package's control file and
# its /usr/share/doc/geoattrd/copyright. Run from the repository's root.
#   static_sources ARCH           the Static-Built-Using: value: the source package and version of
#                                 libgps and libyaml as linked (the host's -dev packages for the
#                                 native build, the sysroot's for arm64)
#   deb_copyright ARCH CHECKOUTS  the copyright file: the licence and notices of each library
#                                 linked in, as its source ships them (Debian's copyright files of
#                                 libgps and libyaml, the Swift runtime's licence, each Swift
#                                 package's LICENSE and NOTICE under CHECKOUTS, SwiftPM's
#                                 checkouts of the build)

# The .deb of PACKAGE the arm64 sysroot was made of (scripts/arm64/toolchain.sh).
sysroot_deb() {
    source scripts/arm64/common.sh
    local found
    found=$(find "$arm64_debs/bookworm-arm64" -name "${1}_*_arm64.deb")
    [ -n "$found" ] && [ "$(wc -l <<<"$found")" -eq 1 ] ||
        { echo "deb-copyright: not one $1 in $arm64_debs/bookworm-arm64: ${found:-none}" >&2; return 1; }
    printf '%s\n' "$found"
}

# SOURCE (= VERSION) of a binary package, from the fields dpkg gives: Source may name the
# source's own version in parentheses (a binary-only rebuild), else the versions are one.
source_of() { # PACKAGE VERSION SOURCE-FIELD
    local source=${3:-$1} version=$2
    case $source in
    *"("*")") version=${source#*(} version=${version%)} source=${source%% *} ;;
    esac
    printf '%s (= %s)' "$source" "$version"
}

static_sources() {
    local arch=$1 package deb version source entries=()
    for package in libgps-dev libyaml-dev; do
        if [ "$arch" = "$(dpkg --print-architecture)" ]; then
            version=$(dpkg-query -W -f='${Version}' "$package") && source=$(dpkg-query -W -f='${Source}' "$package") || return 1
        else
            deb=$(sysroot_deb "$package") || return 1
            version=$(dpkg-deb -f "$deb" Version) && source=$(dpkg-deb -f "$deb" Source) || return 1
        fi
        [ -n "$version" ] || { echo "deb-copyright: no version of $package" >&2; return 1; }
        entries+=("$(source_of "$package" "$version" "$source")")
    done
    local IFS=,
    printf '%s\n' "${entries[*]}" | sed 's/,/, /g'
}

# The copyright file of a Debian package as the host has it, or the arm64 sysroot's.
debian_copyright() { # ARCH PACKAGE
    if [ "$1" = "$(dpkg --print-architecture)" ]; then
        cat "/usr/share/doc/$2/copyright"
    else
        dpkg-deb --fsys-tarfile "$(sysroot_deb "$2")" | tar -xO "./usr/share/doc/$2/copyright"
    fi
}

deb_copyright() {
    local arch=$1 checkouts=$2 library dir entry
    cat <<'HEADER'
geoattrd

geoattrd and geoattrctl are the geoattrd authors' work. They are statically linked: each binary
carries libgps, libyaml, the Swift standard library and runtime, and the Swift packages below.
The licence and the notices of each follow, as its source ships them.

HEADER
    # The packages are built against Debian 12's libgps (libgps28) and libyaml (libyaml-0-2).
    for library in libgps:libgps28 libyaml:libyaml-0-2; do
        printf '==== %s (from Debian 12'"'"'s %s) ====\n\n' "${library%%:*}" "${library#*:}"
        debian_copyright "$arch" "${library#*:}"
        printf '\n'
    done
    printf '==== The Swift standard library and runtime (Apache-2.0 with the Runtime Library Exception) ====\n\n'
    cat "$(dirname "$(dirname "$(command -v swift)")")/share/swift/LICENSE.txt"
    printf '\n'
    # Each licence text in full once; a package whose text is one already given names it.
    local license hash given=()
    for dir in "$checkouts"/*/; do
        license=$(cat "$dir"/LICENSE.txt "$dir"/LICENSE 2>/dev/null) || true
        [ -n "$license" ] || continue
        printf '==== %s ====\n\n' "$(basename "$dir")"
        hash=$(printf '%s' "$license" | sha256sum | cut -c1-16)
        local first=
        for entry in "${given[@]}"; do [ "${entry%%:*}" != "$hash" ] || first=${entry#*:}; done
        if [ -n "$first" ]; then
            printf 'Its licence is the text given above for %s.\n' "$first"
        else
            printf '%s\n' "$license"
            given+=("$hash:$(basename "$dir")")
        fi
        if [ -f "$dir/NOTICE.txt" ]; then printf '\n'; cat "$dir/NOTICE.txt"; fi
        printf '\n'
    done
}
