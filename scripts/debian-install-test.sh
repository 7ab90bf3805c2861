#!/usr/bin/env bash
# Installs geoattrd from an apt repository made by scripts/make-apt-repo.sh, as the operator's
# instructions say, on Debian 12 (bookworm) and Debian 13 (trixie), amd64, each in an overlay
# over a cached minbase tree (scripts/lib/debian-tree.sh), with the repository served on
# 127.0.0.1. For each release, one PASS/FAIL line per check:
#   - apt-get update with the keyring in /etc/apt/keyrings and the deb822 sources entry of
#     docs/operating.md (Signed-By): no error, no warning, no signature complaint;
#   - apt-get install -y of the packages the documents name (a policy-rc.d that refuses to start
#     services, as an image build has); the keyring package takes over the operator's keyring;
#   - geoattrctl lookup 48.8566,2.3522: FR, FR-IDF, Paris, Europe/Paris;
#   - geoattrd run by hand in the tree against that release's gpsd, through gpsfake replaying
#     share/tracks/demo.nmea: its socket serves FR-IDF;
#   - the arm64 package's dependencies resolve against that release's arm64 archive (apt with
#     state of its own, -o APT::Architecture=arm64, apt-get -s install);
#   - a key rotation through the keyring package (scripts/lib/apt-repo-test.sh, rotation_check).
# Then, when both releases ran: the bookworm tree upgraded in place to trixie (the suites changed,
# apt full-upgrade) keeps a geoattrd that answers and takes a fix from trixie's gpsd.
# Also: README.md and docs/operating.md give the same sources entry.
#   sudo bash scripts/debian-install-test.sh REPO [RELEASE ...]     (default: bookworm trixie)
#   sudo bash scripts/debian-install-test.sh --prepare [RELEASE ...]    builds the trees only
# Needs root and Debian's archive. The trees are built once (about 2 minutes each) and kept in
# /var/cache/geoattrd-ci/trees; the arm64 package lists in /var/cache/geoattrd-ci/apt-install-test.
# Exits non-zero when a check fails; leaves no mount and no process behind.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 64; }
repo=$1
shift
releases=("$@")
[ ${#releases[@]} -gt 0 ] || releases=(bookworm trixie)
source scripts/lib/debian-tree.sh
source scripts/lib/apt-repo-test.sh
# What the device has before geoattrd: gpsd and its Python module (gpsfake's); the rest comes
# from apt.
tree_packages=ca-certificates,gpsd,python3-gps
if [ "$repo" = --prepare ]; then
    for release in "${releases[@]}"; do release_tree "$release" >/dev/null; done
    exit 0
fi
repo=$(realpath "$repo")
for file in dists/stable/InRelease geoattrd-archive-keyring.gpg; do
    [ -f "$repo/$file" ] || { echo "debian-install-test: $repo/$file is missing: not a repository of scripts/make-apt-repo.sh" >&2; exit 64; }
done
cache=/var/cache/geoattrd-ci/apt-install-test
command -v gpg >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 gpg >/dev/null

work=$(mktemp -d /tmp/geoattrd-install-test.XXXXXX)
mounted=() gnupg_homes=() server_pid=
cleanup() {
    local i home
    # A second signal (timeout(1) signals the process and then its group) must not cut this short.
    trap '' INT TERM
    if [ -n "$server_pid" ]; then
        kill "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
    fi
    for home in "${gnupg_homes[@]}"; do gpgconf --homedir "$home" --kill all 2>/dev/null || true; done
    for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
        umount "${mounted[$i]}" 2>/dev/null || umount -l "${mounted[$i]}" || true
    done
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

www=$work/www
mkdir -p "$www"
ln -s "$repo" "$www/geoattrd"
start_server "$www"
uri=http://127.0.0.1:$port/geoattrd

doc_sources=$(doc_block docs/operating.md)
if [ -n "$doc_sources" ] && [ "$doc_sources" = "$(doc_block README.md)" ] && grep -q '^Signed-By: /etc/apt/keyrings/geoattrd-archive-keyring.gpg$' <<<"$doc_sources"; then
    pass "README.md and docs/operating.md give the same sources entry, Signed-By /etc/apt/keyrings/geoattrd-archive-keyring.gpg"
else
    fail "README.md and docs/operating.md: no geoattrd.sources entry with that Signed-By, or two different ones"
    doc_sources=$(printf 'Types: deb\nURIs: https://REPOSITORY.example/geoattrd\nSuites: stable\nComponents: main\nSigned-By: /etc/apt/keyrings/geoattrd-archive-keyring.gpg')
fi
# The packages the documents install: the words after "apt install" in operating.md's block.
packages=$(awk '/^cat >\/etc\/apt\/sources.list.d\/geoattrd.sources/ { on = 1 } on && /^apt install / { $1 = $2 = ""; print; exit }' docs/operating.md)
read -r -a packages <<<"${packages:-geoattrd geoattrd-geodata geoattrd-archive-keyring}"
# The versions the repository offers for amd64, to compare with what gets installed.
declare -A offered=()
while read -r name version; do offered[$name]=$version; done < <(awk '
    /^Package: / { p = $2 } /^Version: / { print p, $2 }' "$repo/dists/stable/main/binary-amd64/Packages")

for release in "${releases[@]}"; do
    echo "== $release" >&2
    part_start=$SECONDS
    overlay_tree "$release" "$release"
    root=$tree_root
    timed "$release: tree and overlay"

    # --- apt-get update, with what the operator writes --------------------------------------
    part_start=$SECONDS
    install -d -m 0755 "$root/etc/apt/keyrings"
    # The keyring where the documents fetch it: at the top of the repository's URI.
    python3 -c 'import sys, urllib.request; sys.stdout.buffer.write(urllib.request.urlopen(sys.argv[1]).read())' \
        "$uri/geoattrd-archive-keyring.gpg" >"$root/etc/apt/keyrings/geoattrd-archive-keyring.gpg"
    chmod 0644 "$root/etc/apt/keyrings/geoattrd-archive-keyring.gpg"
    sources_entry "$uri" /etc/apt/keyrings/geoattrd-archive-keyring.gpg >"$root/etc/apt/sources.list.d/geoattrd.sources"
    apt_version=$(chroot "$root" dpkg-query -W -f '${Version}' apt)
    if in_tree "$root" apt-get update >"$work/$release.update" 2>&1 && [ -z "$(apt_trouble "$work/$release.update")" ] &&
        grep -q "^Get:.* $uri stable InRelease" "$work/$release.update"; then
        pass "$release: apt-get update (apt $apt_version): the repository's InRelease verified, no warning"
    else
        fail "$release: apt-get update (apt $apt_version)"
        cat "$work/$release.update"
    fi
    timed "$release: apt-get update"

    # --- apt-get install ----------------------------------------------------------------------
    part_start=$SECONDS
    printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
    chmod 0755 "$root/usr/sbin/policy-rc.d"
    installed=
    if in_tree "$root" apt-get install -y "${packages[@]}" >"$work/$release.install" 2>&1 </dev/null; then
        installed=1
        wrong=
        for name in "${packages[@]}"; do
            have=$(chroot "$root" dpkg-query -W -f '${Version} ${db:Status-Status}' "$name" 2>/dev/null || true)
            [ "$have" = "${offered[$name]:-?} installed" ] || wrong+=" $name (${have:-not installed}; offered ${offered[$name]:-nothing})"
        done
        owner=$(chroot "$root" dpkg -S /etc/apt/keyrings/geoattrd-archive-keyring.gpg 2>/dev/null || true)
        if [ -z "$wrong" ] && [ "$owner" = "geoattrd-archive-keyring: /etc/apt/keyrings/geoattrd-archive-keyring.gpg" ]; then
            pass "$release: apt-get install -y ${packages[*]}: the repository's versions, and the keyring now the package's"
        else
            fail "$release: apt-get install -y ${packages[*]}:${wrong:- dpkg -S of the keyring says: ${owner:-no package}}"
        fi
    else
        fail "$release: apt-get install -y ${packages[*]}"
        grep -E '^(E|W):|Depends:|not installable|held broken' "$work/$release.install" || tail -n 15 "$work/$release.install"
    fi
    timed "$release: apt-get install"

    # --- the geocoder -------------------------------------------------------------------------
    part_start=$SECONDS
    if [ -n "$installed" ]; then
        answer=$(in_tree "$root" geoattrctl lookup 48.8566,2.3522 2>&1 || true)
        missing=
        for pair in '"geo.country.iso_code":"FR"' '"geo.region.iso_code":"FR-IDF"' '"geo.locality.name":"Paris"' \
            '"geo.timezone":"Europe/Paris"'; do
            grep -qF -- "$pair" <<<"$answer" || missing+=" $pair"
        done
        if [ -z "$missing" ]; then pass "$release: geoattrctl lookup 48.8566,2.3522: FR, FR-IDF, Paris, Europe/Paris"
        else fail "$release: geoattrctl lookup 48.8566,2.3522: no$missing in: $answer"; fi
    else
        fail "$release: geoattrctl lookup 48.8566,2.3522 (not run: nothing installed)"
    fi
    timed "$release: geoattrctl lookup"

    # --- the daemon against this release's gpsd -----------------------------------------------
    part_start=$SECONDS
    if [ -n "$installed" ]; then
        gpsd_version=$(chroot "$root" dpkg-query -W -f '${Version}' gpsd)
        if daemon_serves "$root" "$work/$release.daemon"; then
            pass "$release: geoattrd fed by gpsd $gpsd_version (gpsfake, demo.nmea) serves FR-IDF on its socket"
        else
            fail "$release: geoattrd fed by gpsd $gpsd_version (gpsfake, demo.nmea): its socket did not serve FR-IDF"
            tail -n 20 "$work/$release.daemon"
        fi
    else
        fail "$release: geoattrd against $release's gpsd (not run: nothing installed)"
    fi
    timed "$release: the daemon through gpsfake"

    # --- arm64: the package's dependencies against the release's arm64 archive ----------------
    part_start=$SECONDS
    apt_dir=$cache/arm64-$release
    mirror=$(awk '$1 == "deb" { print $2; exit }' "$root/etc/apt/sources.list")
    mkdir -p "$apt_dir/sources.list.d"
    cp "$root/usr/share/keyrings/debian-archive-keyring.gpg" "$apt_dir/debian-archive-keyring.gpg"
    echo "deb [signed-by=$apt_dir/debian-archive-keyring.gpg] ${mirror:-http://deb.debian.org/debian} $release main" >"$apt_dir/sources.list"
    sources_entry "$uri" "$repo/geoattrd-archive-keyring.gpg" >"$apt_dir/sources.list.d/geoattrd.sources"
    arm64=(-o APT::Architecture=arm64 -o APT::Architectures::=arm64)
    if ! grep -qx 'Package: geoattrd' "$repo/dists/stable/main/binary-arm64/Packages" ||
        ! awk '/^Package: geoattrd$/ { p = 1 } p && /^Architecture: arm64$/ { found = 1 } /^$/ { p = 0 } END { exit !found }' \
            "$repo/dists/stable/main/binary-arm64/Packages"; then
        fail "$release arm64: the repository has no geoattrd for arm64"
    elif ! private_apt "$apt_dir" apt-get "${arm64[@]}" update >"$work/$release.arm64-update" 2>&1 ||
        [ -n "$(apt_trouble "$work/$release.arm64-update")" ]; then
        fail "$release arm64: apt-get update of $release's arm64 lists"
        cat "$work/$release.arm64-update"
    elif private_apt "$apt_dir" apt-get "${arm64[@]}" -s install geoattrd geoattrd-geodata >"$work/$release.arm64" 2>&1 &&
        grep -q '^Inst geoattrd (.*\[arm64\])' "$work/$release.arm64" && grep -q '^Inst geoattrd-geodata ' "$work/$release.arm64"; then
        pass "$release arm64: geoattrd's Depends resolve against $release's arm64 archive ($(grep -c '^Inst ' "$work/$release.arm64") packages to install)"
    else
        fail "$release arm64: apt-get -s install geoattrd geoattrd-geodata against $release's arm64 archive"
        grep -E '^(E|W):|Depends:|not installable' "$work/$release.arm64" || tail -n 15 "$work/$release.arm64"
    fi
    timed "$release: arm64 resolution"

    # --- a key rotation -----------------------------------------------------------------------
    part_start=$SECONDS
    rotation_check "$release"
    timed "$release: key rotation"
done

# --- Debian 12 upgraded in place to 13 ---------------------------------------------------------
# The bookworm tree, with geoattrd from the repository, moved to trixie as Debian's release notes
# say (the suites changed, then apt full-upgrade): geoattrd stays installed, answers, and takes a
# fix from the gpsd 3.25 the upgrade brings. The downloaded packages are kept for the next run.
if [[ " ${releases[*]} " == *" bookworm "* && " ${releases[*]} " == *" trixie "* && -d $work/bookworm/root/usr/bin ]]; then
    echo "== bookworm upgraded to trixie" >&2
    part_start=$SECONDS
    root=$work/bookworm/root
    mkdir -p "$cache/upgrade-archives/partial"
    mount --bind "$cache/upgrade-archives" "$root/var/cache/apt/archives"
    mounted+=("$root/var/cache/apt/archives")
    sed -i 's/\bbookworm\b/trixie/g' "$root/etc/apt/sources.list"
    if in_tree "$root" apt-get update >"$work/upgrade.update" 2>&1 &&
        in_tree "$root" apt-get full-upgrade -y -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold \
            >"$work/upgrade.log" 2>&1 </dev/null; then
        have=$(chroot "$root" dpkg-query -W -f '${Version} ${db:Status-Status}' geoattrd 2>/dev/null || true)
        debian=$(cat "$root/etc/debian_version")
        gpsd_version=$(chroot "$root" dpkg-query -W -f '${Version}' gpsd)
        answer=$(in_tree "$root" geoattrctl lookup 48.8566,2.3522 2>&1 || true)
        # trixie's gpsfake now, with trixie's python3-gps.
        if [ "$have" = "${offered[geoattrd]:-?} installed" ] && grep -qF '"geo.region.iso_code":"FR-IDF"' <<<"$answer" &&
            daemon_serves "$root" "$work/upgrade.daemon"; then
            pass "bookworm upgraded in place to trixie (Debian $debian, gpsd $gpsd_version): geoattrd $have, answers, serves FR-IDF"
        else
            fail "bookworm upgraded in place to trixie (Debian $debian): geoattrd ${have:-missing}; lookup: $answer"
            tail -n 20 "$work/upgrade.daemon" 2>/dev/null || true
        fi
    else
        fail "bookworm upgraded in place to trixie: apt-get update or full-upgrade failed"
        grep -E '^(E|W):' "$work/upgrade.update" "$work/upgrade.log" || tail -n 20 "$work/upgrade.log"
    fi
    timed "bookworm upgraded to trixie"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
