#!/usr/bin/env bash
# Writes a signed apt repository of geoattrd's packages with Debian's own tools (apt-ftparchive,
# gpg), for devices that install and upgrade with apt (docs/building.md, "The apt repository").
#   bash scripts/make-apt-repo.sh OUTDIR [DEB ...]
#     DEB ...  the packages to publish, exactly these (CI passes those it built); without them,
#              scripts/make-deb.sh builds geoattrd for amd64 with geoattrd-geodata, and geoattrd
#              for arm64 (several minutes)
#   writes
#     OUTDIR/pool/main/g/PACKAGE/PACKAGE_VERSION_ARCH.deb
#     OUTDIR/dists/stable/{Release,InRelease,Release.gpg}
#     OUTDIR/dists/stable/main/binary-{amd64,arm64}/Packages{,.gz,.xz}
#     OUTDIR/geoattrd-archive-keyring.gpg       the public keys, as a binary keyring
#   and adds geoattrd-archive-keyring_VERSION_all.deb (those keys in
#   /etc/apt/keyrings/geoattrd-archive-keyring.gpg, a conffile, and in /usr/share/keyrings) to
#   the pool, so that a new key reaches the devices with "apt upgrade".
# Suite and Codename are both "stable", Origin and Label "geoattrd", component "main": apt
# stops updating a source whose Release changes one of them, so they never change.
# The key: GEOATTRD_REPO_GNUPGHOME names the GnuPG home of the release keys; GEOATTRD_REPO_KEY
# (a fingerprint) picks the signing key when it holds more than one secret key, and
# GEOATTRD_REPO_PASSPHRASE_FILE gives its passphrase without a prompt. The keyring carries every
# public key in that home: during a rotation, the current key and the next. Without
# GEOATTRD_REPO_GNUPGHOME, a throwaway ed25519 key made for this run signs (for tests only).
# GEOATTRD_KEYRING_VERSION overrides the keyring package's version (keyring_version below).
set -euo pipefail
cd "$(dirname "$0")/.."
# The keyring package's own version: raised whenever the set of keys changes, so that apt
# upgrades it on the devices.
keyring_version=${GEOATTRD_KEYRING_VERSION:-2026.1}
suite=stable
component=main
architectures=(amd64 arm64)

[ $# -ge 1 ] || { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 64; }
out=$(realpath -m "$1")
shift
debs=()
for deb in "$@"; do debs+=("$(realpath "$deb")"); done

missing=()
command -v apt-ftparchive >/dev/null || missing+=(apt-utils)
command -v gpg >/dev/null || missing+=(gpg)
command -v gpg-agent >/dev/null || missing+=(gpg-agent)
command -v gpgv >/dev/null || missing+=(gpgv)
command -v xz >/dev/null || missing+=(xz-utils)
if [ ${#missing[@]} -gt 0 ]; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 "${missing[@]}" >/dev/null
fi

# What this script wrote in OUTDIR before is replaced: only an empty directory, or one it wrote.
if [ -d "$out" ] && [ -n "$(ls -A "$out")" ] && ! grep -qx 'Origin: geoattrd' "$out/dists/$suite/Release" 2>/dev/null; then
    echo "make-apt-repo: $out is neither empty nor a repository this script wrote: not touched" >&2
    exit 1
fi
mkdir -p "$out"

scratch=$(mktemp -d)
gnupghome=
cleanup() {
    # The agent of a throwaway home is this run's own; so is one this run started for the release
    # home (it would keep the passphrase, and the medium the home is on, busy).
    if [ -n "$gnupghome" ] && { [ -z "${GEOATTRD_REPO_GNUPGHOME:-}" ] || [ -z "$agent_before" ]; }; then
        gpgconf --homedir "$gnupghome" --kill all 2>/dev/null || true
    fi
    rm -rf "$scratch"
}
agent_before=
trap cleanup EXIT

if [ ${#debs[@]} -eq 0 ]; then
    echo "make-apt-repo: no packages given: building them (scripts/make-deb.sh, several minutes)" >&2
    # Each build's list in a file: a failed build stops this script (set -e), where a process
    # substitution's status would be lost and a repository published with packages missing.
    bash scripts/make-deb.sh "$scratch/build" >"$scratch/native.list"
    bash scripts/make-deb.sh --arch arm64 "$scratch/build" >"$scratch/arm64.list"
    mapfile -t debs < <(cat "$scratch/native.list" "$scratch/arm64.list")
fi

# --- The packages given: one of each name and architecture -------------------------------------
declare -A seen=()
maintainer=
for deb in "${debs[@]}"; do
    package=$(dpkg-deb -f "$deb" Package)
    arch=$(dpkg-deb -f "$deb" Architecture)
    [ -z "${seen[$package:$arch]:-}" ] ||
        { echo "make-apt-repo: $package ($arch) given twice: ${seen[$package:$arch]} and $deb" >&2; exit 1; }
    seen[$package:$arch]=$deb
    case $arch in
    all) ;;
    *) case " ${architectures[*]} " in *" $arch "*) ;; *)
        echo "make-apt-repo: $deb: architecture $arch is not one of the repository's (${architectures[*]})" >&2; exit 1 ;;
       esac ;;
    esac
    [ "$package" = geoattrd-archive-keyring ] &&
        { echo "make-apt-repo: $deb: the keyring package is made here, from the signing keys" >&2; exit 1; }
    [ "$package" = geoattrd ] && maintainer=$(dpkg-deb -f "$deb" Maintainer)
done
[ -n "$maintainer" ] || { echo "make-apt-repo: no geoattrd package among the packages given" >&2; exit 1; }

# --- The signing key -----------------------------------------------------------------------------
if [ -n "${GEOATTRD_REPO_GNUPGHOME:-}" ]; then
    gnupghome=$GEOATTRD_REPO_GNUPGHOME
    [ -d "$gnupghome" ] || { echo "make-apt-repo: GEOATTRD_REPO_GNUPGHOME=$gnupghome: no such directory" >&2; exit 1; }
    # Whether an agent already serves that home (the operator's own: left running).
    agent_before=$(gpg-connect-agent --homedir "$gnupghome" --no-autostart /bye 2>/dev/null && echo running || true)
else
    gnupghome=$scratch/gnupg
    mkdir -m 0700 "$gnupghome"
    gpg --homedir "$gnupghome" --batch --quiet --passphrase '' \
        --quick-gen-key 'geoattrd throwaway test archive key' ed25519 sign 0 2>/dev/null
    echo "make-apt-repo: GEOATTRD_REPO_GNUPGHOME is not set: signed with a throwaway ed25519 key made for this run" \
        "(a test repository; devices trust only the release key)" >&2
fi
gpg=(gpg --homedir "$gnupghome" --batch --no-tty)
# The keys that sign, one line each: the primary's fingerprint, then that key's algorithm (1 RSA,
# 22 EdDSA) and length. A key signs when field 12 has a lowercase s, the primary or a subkey
# (gpg signs with a signing subkey when there is one, so each must meet the policy below); a
# primary whose overall capabilities (uppercase) lack S signs with none.
signers=$("${gpg[@]}" --with-colons --list-secret-keys 2>/dev/null | awk -F: '
    $1 == "sec" { usable = ($12 ~ /S/); primary = "" }
    $1 == "sec" || $1 == "ssb" { signs = usable && $12 ~ /s/; algo = $4; bits = $3 }
    $1 == "fpr" { if (primary == "") primary = $10; if (signs) print primary, algo, bits; signs = 0 }')
primaries=$(awk '{ print $1 }' <<<"$signers" | sort -u | sed '/^$/d')
if [ -n "${GEOATTRD_REPO_KEY:-}" ]; then
    key=${GEOATTRD_REPO_KEY^^}
    grep -qx "$key" <<<"$primaries" || { echo "make-apt-repo: GEOATTRD_REPO_KEY=$GEOATTRD_REPO_KEY: no secret signing key with that fingerprint in $gnupghome" >&2; exit 1; }
else
    [ -n "$primaries" ] || { echo "make-apt-repo: no secret signing key in $gnupghome" >&2; exit 1; }
    [ "$(wc -l <<<"$primaries")" -eq 1 ] ||
        { echo "make-apt-repo: $gnupghome holds more than one secret signing key: name one with GEOATTRD_REPO_KEY" >&2; exit 1; }
    key=$primaries
fi
# apt in Debian 13 verifies with sqv, whose policy warns on weak keys and digests.
while read -r primary algo bits; do
    [ "$primary" = "$key" ] || continue
    case $algo in
    22) ;;
    1) [ "$bits" -ge 3072 ] || { echo "make-apt-repo: $key: a signing key of RSA $bits: each must be ed25519 or RSA of 3072 bits or more" >&2; exit 1; } ;;
    *) echo "make-apt-repo: $key: a signing key of algorithm $algo: each must be ed25519 or RSA of 3072 bits or more" >&2; exit 1 ;;
    esac
done <<<"$signers"
signing=("${gpg[@]}" --local-user "$key" --digest-algo SHA512 --personal-digest-preferences SHA512)
if [ -n "${GEOATTRD_REPO_PASSPHRASE_FILE:-}" ]; then
    signing+=(--pinentry-mode loopback --passphrase-file "$GEOATTRD_REPO_PASSPHRASE_FILE")
fi
echo "make-apt-repo: signing with $key" >&2

# --- The repository, built beside OUTDIR's content and then put in its place --------------------
new=$scratch/repo
mkdir -p "$new"
"${gpg[@]}" --export --export-options export-minimal >"$new/geoattrd-archive-keyring.gpg"
[ -s "$new/geoattrd-archive-keyring.gpg" ] || { echo "make-apt-repo: gpg exported no public key from $gnupghome" >&2; exit 1; }
chmod 0644 "$new/geoattrd-archive-keyring.gpg"
fingerprints=$(gpg --homedir "$scratch" --batch --no-tty --with-colons --show-keys "$new/geoattrd-archive-keyring.gpg" 2>/dev/null |
    awk -F: '$1 == "pub" { p = 1; next } $1 == "fpr" && p { print $10; p = 0 }')
grep -qx "$key" <<<"$fingerprints" || { echo "make-apt-repo: the keyring lacks the signing key $key" >&2; exit 1; }

# The keyring package. Its keyring is the file the operator's sources entry names,
# /etc/apt/keyrings/geoattrd-archive-keyring.gpg, as a conffile: dpkg takes over the operator's
# first copy (the same bytes as OUTDIR/geoattrd-archive-keyring.gpg) without a question, and
# replaces it at each upgrade while it is unedited. apt refuses a source whose Signed-By names a
# missing file (apt 2.6 and 3.0 alike), so a second path there cannot carry the next key. The
# same keys are also in /usr/share/keyrings, where packaged keyrings live.
keyring=$scratch/keyring
install -d "$keyring/DEBIAN" "$keyring/etc/apt/keyrings" "$keyring/usr/share/keyrings" "$keyring/usr/share/doc/geoattrd-archive-keyring"
install -m 0644 "$new/geoattrd-archive-keyring.gpg" "$keyring/etc/apt/keyrings/geoattrd-archive-keyring.gpg"
install -m 0644 "$new/geoattrd-archive-keyring.gpg" "$keyring/usr/share/keyrings/geoattrd-archive-keyring.gpg"
echo /etc/apt/keyrings/geoattrd-archive-keyring.gpg >"$keyring/DEBIAN/conffiles"
cat >"$keyring/usr/share/doc/geoattrd-archive-keyring/copyright" <<COPYRIGHT
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: geoattrd-archive-keyring
Comment: The OpenPGP public keys that sign the geoattrd apt repository:
$(sed 's/^/ /' <<<"$fingerprints")

Files: *
Copyright: $maintainer
License: public-domain
 The keys are published so that anyone may use and redistribute them.
COPYRIGHT
chmod 0644 "$keyring/usr/share/doc/geoattrd-archive-keyring/copyright"
cat >"$keyring/DEBIAN/control" <<CONTROL
Package: geoattrd-archive-keyring
Version: $keyring_version
Architecture: all
Multi-Arch: foreign
Maintainer: $maintainer
Installed-Size: $(du -sk --exclude=DEBIAN "$keyring" | cut -f1)
Section: misc
Priority: optional
Description: OpenPGP keys of the geoattrd apt repository
 The keys that sign the geoattrd repository, in
 /etc/apt/keyrings/geoattrd-archive-keyring.gpg, which the repository's
 sources entry names in Signed-By (and in /usr/share/keyrings). A new key
 reaches the devices as an upgrade of this package, before the repository
 is signed with it.
CONTROL
keyring_deb=$scratch/geoattrd-archive-keyring_${keyring_version}_all.deb
# The same keys make the same bytes (every time stamp the version's), so that a repository
# published again holds the same file under the same name: proxies and mirrors cache pool files
# by name, and apt refuses one whose hash is not the index's.
epoch=$(printf '%s' "$keyring_version" | cksum | awk '{ print 946684800 + $1 % 100000000 }')
find "$keyring" -exec touch -h -d "@$epoch" {} +
SOURCE_DATE_EPOCH=$epoch dpkg-deb --root-owner-group -Zxz --build "$keyring" "$keyring_deb" >/dev/null
debs+=("$keyring_deb")

for deb in "${debs[@]}"; do
    package=$(dpkg-deb -f "$deb" Package)
    # The file name apt and dpkg expect: NAME_VERSION_ARCH.deb, the epoch left out.
    version=$(dpkg-deb -f "$deb" Version)
    name=${package}_${version#*:}_$(dpkg-deb -f "$deb" Architecture).deb
    pool=$component/${package:0:1}/$package
    # A version once published keeps its bytes: another package under that name (a rebuild, a
    # keyring whose keys changed) must come with a higher version, or devices never see it.
    if [ -f "$out/pool/$pool/$name" ] && ! cmp -s "$deb" "$out/pool/$pool/$name"; then
        echo "make-apt-repo: $out/pool/$pool/$name is already published with other contents: raise the version of $package" \
            "(the keyring's: GEOATTRD_KEYRING_VERSION or keyring_version in this script)" >&2
        exit 1
    fi
    mkdir -p "$new/pool/$pool"
    cp "$deb" "$new/pool/$pool/$name"
done

dist=$new/dists/$suite
for arch in "${architectures[@]}"; do
    dir=$dist/$component/binary-$arch
    mkdir -p "$dir"
    # --arch takes the architecture's packages and those of Architecture: all, by file name.
    (cd "$new" && apt-ftparchive --arch "$arch" packages pool/$component) >"$dir/Packages"
    gzip -9n <"$dir/Packages" >"$dir/Packages.gz"
    xz -9 <"$dir/Packages" >"$dir/Packages.xz"
    grep -qx "Package: geoattrd-archive-keyring" "$dir/Packages" ||
        { echo "make-apt-repo: binary-$arch lists no geoattrd-archive-keyring" >&2; exit 1; }
done
# SHA-256 and SHA-512 only: apt no longer trusts MD5 or SHA-1 alone.
apt-ftparchive \
    -o APT::FTPArchive::Release::Origin=geoattrd -o APT::FTPArchive::Release::Label=geoattrd \
    -o APT::FTPArchive::Release::Suite="$suite" -o APT::FTPArchive::Release::Codename="$suite" \
    -o APT::FTPArchive::Release::Architectures="${architectures[*]}" \
    -o APT::FTPArchive::Release::Components="$component" \
    -o APT::FTPArchive::Release::Description="geoattrd: OpenTelemetry geo.* attributes for Linux edge devices" \
    -o APT::FTPArchive::MD5=false -o APT::FTPArchive::SHA1=false \
    -o APT::FTPArchive::SHA256=true -o APT::FTPArchive::SHA512=true \
    release "$dist" >"$scratch/Release"
mv "$scratch/Release" "$dist/Release"
"${signing[@]}" --clearsign --output "$dist/InRelease" "$dist/Release"
"${signing[@]}" --detach-sign --armor --output "$dist/Release.gpg" "$dist/Release"
# The signatures as apt checks them: gpgv against the exported keyring alone.
if ! gpgv --keyring "$new/geoattrd-archive-keyring.gpg" "$dist/InRelease" 2>"$scratch/gpgv.log" ||
    ! gpgv --keyring "$new/geoattrd-archive-keyring.gpg" "$dist/Release.gpg" "$dist/Release" 2>>"$scratch/gpgv.log"; then
    cat "$scratch/gpgv.log" >&2
    echo "make-apt-repo: gpgv does not verify the signatures just made" >&2
    exit 1
fi

# OUTDIR: what this script wrote there before is replaced.
rm -rf "$out/pool" "$out/dists" "$out/geoattrd-archive-keyring.gpg"
mv "$new/pool" "$new/dists" "$new/geoattrd-archive-keyring.gpg" "$out/"
echo "make-apt-repo: $out: $(find "$out/pool" -name '*.deb' | wc -l) packages, suite $suite, signed by $key" >&2
find "$out/pool" -name '*.deb' | sort
