#!/usr/bin/env bash
# The packaged units under a real systemd: boots Debian 12 (systemd 252) or Debian 13 (systemd
# 257) as PID 1 of a systemd-nspawn container, installs the package in it from an apt repository
# served on the container's loopback (install.sh), with the world index package beside it when
# there is one (geoattrd-geodata), feeds a gpsd (gpsfake) on the container's
# 127.0.0.1:2947 a track generated here, and checks what check-units.sh cannot see offline, one
# PASS/FAIL line each, in sections whose files under scripts/systemd-test/ say what each checks
# (tree.sh, container.sh, install.sh and helpers.sh hold what they share):
#   1. the first client's fix through the sockets and the relay       01-activation.sh
#   2. geoattrd's network namespace                                     02-isolation.sh
#   3. its private /tmp and /var/tmp                                    02-isolation.sh
#   4. a restart keeps the namespace                                    02-isolation.sh
#   5. its journal                                                      05-health.sh
#   6. no restarts, no failed unit; the exposure                        05-health.sh
#   7. Type=notify and STATUS=; the watchdog                            05-health.sh
#   8. the runtime layout; a client and a supervisor                    08-runtime-layout.sh
#   9. an upgrade from the old runtime layout                           08-runtime-layout.sh
#  10. the Collector recipe's restart pair                              10-collector.sh
#  11. Prometheus: /metrics alone on loopback TCP                       11-prometheus.sh
#  12. Prometheus: node_exporter's textfile collector                   11-prometheus.sh
#  13. the env format under EnvironmentFile=                            13-env-format.sh
#  14. an upgrade over what a client planted in the old layout          14-upgrade-planted.sh
#  15. the recipes as the documents write them, and who reads them      15-recipes.sh
#  16. scraping while a local user holds idle connections               16-idle-connections.sh
#  17. gpsd's guard                                                     17-gpsd-guard.sh
#  18. the operator's walk, from the previous release to a purge        18-operator-walk.sh
#  19. the install into an image (a chroot without /proc), first boot   19-image-install.sh
#  20. the units under the container's systemd-analyze                  20-units.sh
# Sections 1 to 17, 19 and 20 share one container and run in the order 19, 20, 1, 8, 2 to 7, 9 to
# 17 (8 looks at the layout the first start left; 19 is how the package gets into that container,
# in place of install.sh's offline install); 18 boots a container of its own.
# Which sections run by default depends on the release:
#   bookworm  1 to 18
#   trixie    19, 20, 1 to 8, 15, 17, 18: the install, the units under 257, socket activation
#             and the relay, the namespaces, restart, notify and the watchdog, the runtime layout,
#             the recipes and the guard, the operator's walk (reload, remove, purge) from this
#             release (no earlier one installs on Debian 13). 9 and 14 repair the layouts of
#             releases that never ran there; 10 to 13 and 16 do not depend on the release.
# The units tested are the package's: nothing in it is replaced.
#
#   sudo bash scripts/systemd-test.sh [--release R] [--section N]... [DEB [GEODATA-DEB]]
#   sudo bash scripts/systemd-test.sh [--release R] --prepare    builds the tree only (CI does
#                  this in the background, beside the test suite)
#     --release R  the Debian release of the container: bookworm (default) or trixie; or
#                  DEBIAN_RELEASE=R
#     DEB          default: the newest dist/geoattrd_*_ARCH.deb (ARCH: dpkg --print-architecture)
#     GEODATA-DEB  default: the newest geoattrd-geodata_*_all.deb beside DEB, if there is one
#     --section N  runs section N (repeated for more, or SYSTEMD_TEST_SECTIONS="8 12") and, before
#                  it, the sections whose state it builds on (`requires` below), saying which;
#                  default: the release's sections above
#
# Needs root and, the first time for each release, the network: the container's tree (about
# 300 MB) is built once with debootstrap (scripts/lib/debian-tree.sh) and kept in
# /var/cache/geoattrd-ci/systemd-test (SYSTEMD_TEST_CACHE), outside the clone; about 3 minutes,
# again when the recipe in tree.sh changes. Each run boots an overlayfs copy of it, thrown away on
# exit. Installs debootstrap, systemd-container, gpg and gpg-agent if missing.
#   PREVIOUS_DEB        the previous release's geoattrd package, for section 18 on bookworm
#                       (PREVIOUS_DEB=$(bash scripts/previous-release-deb.sh)); unset: section 18
#                       is skipped there, or refused when chosen. Not used on trixie.
#   DEBIAN_MIRROR       default: the host's configured Debian mirror, else deb.debian.org
#   SYSTEMD_TEST_IDLE=1 section 7 also waits for the relay to exit after its idle minute and
#                       checks that the next fix starts it again (about 70 s more)
set -euo pipefail
cd "$(dirname "$0")/.."

wanted=${SYSTEMD_TEST_SECTIONS:-}
release=${DEBIAN_RELEASE:-bookworm}
usage="usage: scripts/systemd-test.sh [--release bookworm|trixie] [--section N]... [DEB [GEODATA-DEB]]"
positional=() prepare=
while [ $# -gt 0 ]; do
    case $1 in
    --release) release=${2:-}; shift 2 || { echo "systemd-test: --release takes a release ($usage)" >&2; exit 1; } ;;
    --release=*) release=${1#--release=}; shift ;;
    --section)
        [[ ${2:-} =~ ^[0-9]+$ ]] || { echo "systemd-test: --section takes a section number (1 to 20), not '${2:-}'" >&2; exit 1; }
        wanted+=" $2"
        shift 2
        ;;
    --section=*) wanted+=" ${1#--section=}"; shift ;;
    --prepare) prepare=yes; shift ;;
    --) shift; positional+=("$@"); break ;;
    -*) echo "systemd-test: unknown option $1 ($usage)" >&2; exit 1 ;;
    *) positional+=("$1"); shift ;;
    esac
done
set -- "${positional[@]}"
case $release in
bookworm) defaults=(1 8 2 3 4 5 6 7 9 10 11 12 13 14 15 16 17 18) ;;
trixie) defaults=(19 20 1 8 2 3 4 5 6 7 15 17 18) ;;
*) echo "systemd-test: no release '$release' (bookworm or trixie)" >&2; exit 1 ;;
esac

[ "$(id -u)" -eq 0 ] || { echo "systemd-test: needs root (debootstrap, mounts, systemd-nspawn)" >&2; exit 1; }
# The tree, the container, and the repository's signing key (make-apt-repo.sh installs the rest).
missing=()
command -v debootstrap >/dev/null || missing+=(debootstrap)
command -v systemd-nspawn >/dev/null || missing+=(systemd-container)
command -v gpg >/dev/null || missing+=(gpg)
command -v gpg-agent >/dev/null || missing+=(gpg-agent)
if [ ${#missing[@]} -gt 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 "${missing[@]}" >/dev/null
fi
if [ -n "$prepare" ]; then
    source scripts/systemd-test/tree.sh
    build_tree
    exit 0
fi

arch=$(dpkg --print-architecture)
deb=${1:-$(ls -t dist/geoattrd_*_"$arch".deb 2>/dev/null | head -n 1 || true)}
if [ -z "$deb" ]; then
    echo "systemd-test: no dist/geoattrd_*_$arch.deb: run scripts/make-deb.sh first (or pass a .deb)" >&2
    exit 1
fi
[ -f "$deb" ] || { echo "systemd-test: $deb does not exist" >&2; exit 1; }
deb=$(realpath "$deb")
# The index package has versions of its own (format.data-release): the newest beside DEB.
geodata=${2:-$(ls -t "$(dirname "$deb")"/geoattrd-geodata_*_all.deb 2>/dev/null | head -n 1 || true)}
if [ -n "$geodata" ] && [ -f "$geodata" ]; then
    geodata=$(realpath "$geodata")
elif [ -n "${2:-}" ]; then
    echo "systemd-test: $geodata does not exist" >&2
    exit 1
else
    geodata=
fi
# The previous release, for section 18's upgrade on bookworm (scripts/previous-release-deb.sh
# builds it); trixie has none.
previous=${PREVIOUS_DEB:-}
[ "$release" = bookworm ] || previous=
if [ -n "$previous" ]; then
    [ -f "$previous" ] || { echo "systemd-test: PREVIOUS_DEB=$previous does not exist" >&2; exit 1; }
    previous=$(realpath "$previous")
fi

# --- Which sections ----------------------------------------------------------------------------
# 19 installs before the boot and looks at the first boot; 8 looks at the layout the first start
# left, before the restarts of 4 and 9.
order=(19 20 1 8 2 3 4 5 6 7 9 10 11 12 13 14 15 16 17 18)
# What a section needs an earlier one to have left in the container.
declare -A requires=(
    # geoattrd running (2 to 7), and the first fix (8: client1's answer carries it), both from
    # section 1's first client.
    [2]=1 [3]=1 [4]=1 [5]=1 [6]=1 [7]=1 [8]=1
    # client1 (group geoattr), whom section 8 adds: it plants objects in 9 and 14, and must not
    # read the textfile in 12.
    [9]=8 [12]=8
    # The textfile directory, there once section 12 has set outputs.prometheus_file.
    [14]="8 12"
    # geoattrd-metrics-proxy.socket, enabled and started in 11; outsider (no group) and ruled
    # (uid rule none), whom 15 adds.
    [16]="11 15" [17]=15
)
declare -A selected=() asked=()
# select_section N: N and, first, what it requires.
select_section() {
    local n=$1 before
    [ -z "${selected[$n]:-}" ] || return 0
    selected[$n]=1
    for before in ${requires[$n]:-}; do select_section "$before"; done
}
if [ -z "${wanted//[ ,]/}" ]; then
    for n in "${defaults[@]}"; do selected[$n]=1; done
else
    for n in ${wanted//,/ }; do
        if [[ ! $n =~ ^[0-9]+$ ]] || [ "$n" -lt 1 ] || [ "$n" -gt 20 ]; then
            echo "systemd-test: no section '$n' (1 to 20)" >&2
            exit 1
        fi
        asked[$((10#$n))]=1
        select_section "$((10#$n))"
    done
    if [ -n "${selected[18]:-}" ] && [ "$release" = bookworm ] && [ -z "$previous" ]; then
        echo "systemd-test: section 18 upgrades from the previous release: set PREVIOUS_DEB (PREVIOUS_DEB=\$(bash scripts/previous-release-deb.sh))" >&2
        exit 1
    fi
    chosen=() named=() added=()
    for n in "${order[@]}"; do
        [ -n "${selected[$n]:-}" ] || continue
        chosen+=("$n")
        if [ -n "${asked[$n]:-}" ]; then named+=("$n"); else added+=("$n"); fi
    done
    builds="it builds"
    [ ${#named[@]} -eq 1 ] || builds="they build"
    echo "systemd-test: sections ${chosen[*]}${added[*]:+ (${named[*]} and, first, ${added[*]}, whose state $builds on)}"
fi
# Sections 1 to 17, 19 and 20 share a container: it boots when one of them runs.
shared=
for n in "${order[@]}"; do
    if [ "$n" != 18 ] && [ -n "${selected[$n]:-}" ]; then shared=yes; fi
done

if [ -z "${wanted//[ ,]/}" ]; then
    echo "systemd-test: Debian $release, sections $(for n in "${order[@]}"; do [ -z "${selected[$n]:-}" ] || echo "$n"; done | paste -sd ' ')"
else
    echo "systemd-test: Debian $release"
fi
source scripts/systemd-test/tree.sh
source scripts/systemd-test/container.sh
source scripts/systemd-test/install.sh
source scripts/systemd-test/helpers.sh
source scripts/systemd-test/01-activation.sh
source scripts/systemd-test/02-isolation.sh
source scripts/systemd-test/05-health.sh
source scripts/systemd-test/08-runtime-layout.sh
source scripts/systemd-test/10-collector.sh
source scripts/systemd-test/11-prometheus.sh
source scripts/systemd-test/13-env-format.sh
source scripts/systemd-test/14-upgrade-planted.sh
source scripts/systemd-test/15-recipes.sh
source scripts/systemd-test/16-idle-connections.sh
source scripts/systemd-test/17-gpsd-guard.sh
source scripts/systemd-test/18-operator-walk.sh
source scripts/systemd-test/19-image-install.sh
source scripts/systemd-test/20-units.sh

build_tree
start_run
if [ -n "$shared" ]; then
    fresh_overlay
    write_track
    if [ -n "${selected[19]:-}" ]; then image_install; else install_offline; fi
    boot_container
    start_gpsd
fi

for n in "${order[@]}"; do
    if [ "$n" != 18 ] && [ -n "${selected[$n]:-}" ]; then "section_$n"; fi
done
if [ -n "$shared" ] && [ "$failures" -gt 0 ]; then
    echo "--- for the failures above: the units' status and journals"
    ct systemctl status --no-pager --lines=0 geoattrd.socket geoattrd-gpsd.socket geoattrd.service geoattrd-gpsd.service \
        my-exporter.service geoattrd-env-restart@my-exporter.service.path geoattrd-env-restart@my-exporter.service.service 2>&1 | indent || true
    ct journalctl -q --no-pager -o short-monotonic -u geoattrd.socket -u geoattrd.service -u geoattrd-gpsd.socket \
        -u geoattrd-gpsd.service -u my-exporter.service -u 'geoattrd-env-restart@*' 2>&1 | tail -n 150 | indent || true
fi
if [ -n "${selected[18]:-}" ]; then section_18; fi

if [ "$failures" -gt 0 ]; then
    echo "systemd-test: $failures check(s) failed"
    exit 1
fi
echo "systemd-test: all checks passed"
