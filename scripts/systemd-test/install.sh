# shellcheck shell=bash
# How scripts/systemd-test.sh's containers get geoattrd (sourced by it, after container.sh): from
# an apt repository that scripts/make-apt-repo.sh writes into $run/repo, signed with a key made for
# the run, served by python3's http.server on the loopback of the tree it installs into (the
# container's private network, or a network namespace of its own around a chroot), with the
# sources entry and keyring docs/operating.md gives operators; `apt-get install`, `apt upgrade`
# and `apt-get install --reinstall` as an operator runs them. Never from loose .deb files. The
# tree has no Debian source (the container has no network): what geoattrd depends on is in it.

repo_port=8099
repo_mount=/srv/geoattrd-repo

# publish_repo DEB...: $run/repo holds DEB... (and the keyring package make-apt-repo.sh adds) and
# nothing else. The same URI published again: a device sees an upgrade as from a real repository.
publish_repo() {
    if [ ! -d "$run/gnupg" ]; then
        mkdir -m 0700 "$run/gnupg"
        gpg --homedir "$run/gnupg" --batch --quiet --passphrase '' \
            --quick-gen-key 'geoattrd systemd-test archive key' ed25519 sign 0 2>/dev/null
    fi
    mkdir -p "$run/repo"
    GEOATTRD_REPO_GNUPGHOME=$run/gnupg bash scripts/make-apt-repo.sh "$run/repo" "$@" >"$run/make-apt-repo.log" 2>&1 ||
        { cat "$run/make-apt-repo.log" >&2; echo "systemd-test: make-apt-repo.sh failed" >&2; exit 1; }
    echo "systemd-test: repository: $(for deb in "$@"; do basename "$deb"; done | paste -sd ' ')"
}
# stop_repo_agent: the run's gpg-agent, if the run started one.
stop_repo_agent() {
    [ -d "${run:-}/gnupg" ] && gpgconf --homedir "$run/gnupg" --kill all 2>/dev/null || true
}

# install_program MODE PACKAGE...: the shell program (POSIX sh) that installs PACKAGE... from the
# repository at $repo_mount inside the tree it runs in. MODE: install, reinstall (the same
# version again), or upgrade (`apt upgrade`, which must bring geoattrd's new version by itself,
# then PACKAGE..., those not installed yet, if any).
install_program() {
    local mode=$1
    shift
    cat <<PROGRAM
set -e
export DEBIAN_FRONTEND=noninteractive
python3 -m http.server --bind 127.0.0.1 --directory $repo_mount $repo_port >/dev/null 2>&1 &
server=\$!
trap 'kill \$server 2>/dev/null; wait \$server 2>/dev/null || true' EXIT
tries=0
until python3 -c 'import socket; socket.create_connection(("127.0.0.1", $repo_port), timeout=1)' 2>/dev/null; do
    tries=\$((tries + 1))
    [ \$tries -lt 100 ] || { echo "the repository's HTTP server did not start" >&2; exit 1; }
    sleep 0.1
done
install -d -m 0755 /etc/apt/keyrings
cp $repo_mount/geoattrd-archive-keyring.gpg /etc/apt/keyrings/geoattrd-archive-keyring.gpg
cat >/etc/apt/sources.list.d/geoattrd.sources <<'EOF'
Types: deb
URIs: http://127.0.0.1:$repo_port/
Suites: stable
Components: main
Signed-By: /etc/apt/keyrings/geoattrd-archive-keyring.gpg
EOF
apt-get update -q
PROGRAM
    case $mode in
    # No answer given to dpkg for a first install: a conffile question (the keyring package taking
    # over the operator's copy) would fail it.
    install) echo "apt-get install -q -y $*" ;;
    reinstall) echo "apt-get install -q -y --reinstall -o Dpkg::Options::=--force-confold $*" ;;
    upgrade)
        echo "apt upgrade -q -y -o Dpkg::Options::=--force-confold"
        [ $# -eq 0 ] || echo "apt-get install -q -y -o Dpkg::Options::=--force-confold $*"
        ;;
    esac
}
# install_words MODE: what install_program runs for MODE, in a PASS/FAIL line's words.
install_words() {
    case $1 in install) echo "apt-get install" ;; reinstall) echo "apt-get install --reinstall" ;; upgrade) echo "apt upgrade" ;; esac
}
# The packages of this run that a device installs, as docs/operating.md's Install has it:
# geoattrd, the world index when there is one, and the repository's keyring package.
wanted_packages() { echo "geoattrd${geodata:+ geoattrd-geodata} geoattrd-archive-keyring"; }

# install_offline: the packages installed into the overlay before it boots, in a container that
# runs no systemd, and both sockets enabled as the postinst would.
install_offline() {
    note_index
    publish_repo "$deb" ${geodata:+"$geodata"}
    echo "systemd-test: installing $(wanted_packages) (offline)"
    # shellcheck disable=SC2046
    if ! "${nspawn[@]}" --pipe -D "$root" --bind-ro="$run/repo:$repo_mount" sh -ec "$(install_program install $(wanted_packages))" \
        >"$run/install.log" 2>&1; then
        cat "$run/install.log" >&2
        echo "systemd-test: the offline install failed" >&2
        exit 1
    fi
    for unit in geoattrd.socket geoattrd-gpsd.socket; do
        link=$root/etc/systemd/system/sockets.target.wants/$unit
        if [ -L "$link" ]; then
            pass "the package's postinst enabled $unit offline"
        else
            fail "the package's postinst did not enable $unit offline (an image would boot without it)"
        fi
    done
}
# note_index: without the world index package (CI builds no index) the daemon serves location
# attributes only, and it says so at each start: expected then, and only then.
note_index() {
    if [ -n "$geodata" ]; then
        index_expected=yes
    else
        index_expected=no
        echo "NOTE  no geoattrd-geodata package: the daemon warns \"geocoder index refused\" at each start, expected here"
    fi
}

# ct_install MODE PACKAGE...: install_program's steps in the running container (its
# /srv/geoattrd-repo is $run/repo, bound at boot); the output in $installed, the exit status
# returned.
ct_install() {
    local rc=0
    installed=$(ct sh -ec "$(install_program "$@")" 2>&1 </dev/null) || rc=$?
    return "$rc"
}
