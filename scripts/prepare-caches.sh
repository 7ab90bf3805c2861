#!/usr/bin/env bash
# Makes the slow set-ups that the tests after the test suite use, each cached outside the clone
# under /var/cache/geoattrd-ci and each a no-op when it is there already:
#   the Debian 13 gpsfake tree (scripts/gpsfake-trixie.sh --prepare), the install test's Debian
#   12 and 13 trees (scripts/debian-install-test.sh --prepare), the containers' trees
#   (scripts/systemd-test.sh --prepare, both releases), the arm64 cross toolchain and Debian 12
#   sysroot (scripts/arm64/toolchain.sh), the Debian 13 arm64 sysroot
#   (scripts/arm64/sysroot-trixie.sh) and the previous release's package
#   (scripts/previous-release-deb.sh).
# Most of that time is spent waiting on Debian's archive and the disk, so CI runs it in the
# background beside the test suite; every one of these set-ups takes a lock, so a test that
# reaches one first builds it while the other waits. Run by hand, it readies a machine.
#   sudo bash scripts/prepare-caches.sh           every set-up, one after the other
#   sudo bash scripts/prepare-caches.sh --tools   only the host's packages they need
# Each set-up's time goes to standard error; the exit status is that of the first that failed
# (the others are still made).
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" -eq 0 ] || { echo "prepare-caches: needs root (debootstrap, chroots, mounts)" >&2; exit 1; }

# The host's packages the set-ups install when they are missing, installed here first, so that
# nothing in the background takes apt's lock while the test suite may want it.
tools=(debootstrap systemd-container gpg gpg-agent qemu-user-static file)
missing=()
for package in "${tools[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "prepare-caches: installing ${missing[*]}" >&2
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 --no-install-recommends "${missing[@]}" >/dev/null
fi
[ "${1:-}" != --tools ] || exit 0

status=0
prepare() { # NAME COMMAND...
    local name=$1 started=$SECONDS
    shift
    if "$@" >/dev/null; then
        echo "prepare-caches: $name: $((SECONDS - started)) s" >&2
    else
        echo "prepare-caches: $name: FAILED after $((SECONDS - started)) s" >&2
        [ "$status" -ne 0 ] || status=1
    fi
}
# In the order the tests need them.
prepare "gpsd 3.25 tree" bash scripts/gpsfake-trixie.sh --prepare
prepare "install test trees" bash scripts/debian-install-test.sh --prepare bookworm trixie
prepare "arm64 toolchain" bash scripts/arm64/toolchain.sh
prepare "Debian 13 arm64 sysroot" bash scripts/arm64/sysroot-trixie.sh
prepare "container tree, Debian 12" bash scripts/systemd-test.sh --release bookworm --prepare
prepare "container tree, Debian 13" bash scripts/systemd-test.sh --release trixie --prepare
prepare "previous release's package" bash scripts/previous-release-deb.sh
exit "$status"
