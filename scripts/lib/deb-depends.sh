# shellcheck shell=bash
# Sourced: deb_depends BINARY... prints the Depends: of a package shipping these binaries, from
# what they load (their NEEDED entries, read by readelf, which reads an ELF file of any
# architecture): libc6 at the newest glibc version a symbol asks for, and the package of each
# other library. Each package named here has the same name in Debian 12 and 13, so one package
# installs on both; a library that is not here stops the build until its package is added.
deb_depends() {
    local glibc library package depends=
    # check-glibc.sh fails on a symbol newer than Debian 12's glibc; its lines go to the log too.
    glibc=$(bash scripts/arm64/check-glibc.sh "$@" | tee /dev/stderr | awk '{ print $2 }' | sort -V | tail -n1) || return 1
    for library in $(readelf -d "$@" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort -u); do
        case $library in
        libc.so.6 | libm.so.6 | libdl.so.2 | libpthread.so.0 | librt.so.1 | ld-linux-aarch64.so.1 | ld-linux-x86-64.so.2) package="libc6 (>= $glibc)" ;;
        libgcc_s.so.1) package=libgcc-s1 ;;
        libstdc++.so.6) package=libstdc++6 ;;
        libdbus-1.so.3) package=libdbus-1-3 ;;
        *) echo "deb-depends: the binaries load $library: add the package that has it (the same in Debian 12 and 13) to scripts/lib/deb-depends.sh" >&2; return 1 ;;
        esac
        case ", $depends, " in *", $package, "*) ;; *) depends=${depends:+$depends, }$package ;; esac
    done
    printf '%s\n' "$depends"
}
