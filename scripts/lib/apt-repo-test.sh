# shellcheck shell=bash
# Sourced by scripts/debian-install-test.sh: its checks' bookkeeping, the Debian trees it works
# in (an overlay over a cached tree, per release), and commands run inside them.

passed=0 failed=0
pass() { echo "PASS: $*"; passed=$((passed + 1)); }
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }
# timed NAME: how long the part that began at $part_start took, on stderr.
timed() { echo "debian-install-test: $1: $((SECONDS - part_start)) s" >&2; }

# apt_trouble FILE: the lines of apt's output that fail a check: errors, warnings, and any word
# of a signature apt could not verify (apt 3.0 writes "Warning:" and "Error:" on a terminal).
apt_trouble() {
    grep -E '^(W|E|Err|Warning|Error):|NO_PUBKEY|EXPKEYSIG|signature|not signed|Signed-By|sqv|gpgv' "$1" || true
}

# release_tree RELEASE: prints the path of the cached tree of RELEASE (amd64) with $tree_packages,
# built once.
release_tree() {
    local packages=$tree_packages
    # gpsfake of Debian 12 imports distutils, which python3.11 splits out (13 has none).
    [ "$1" != bookworm ] || packages+=,python3-distutils
    debian_tree "$1" amd64 "$packages"
}

# overlay_tree RELEASE NAME: mounts a writable overlay over the cached tree of RELEASE (amd64)
# at $work/NAME/root and sets tree_root to it (not printed: the mount is recorded for the
# clean-up in this shell). The cached tree is never written.
overlay_tree() {
    local release=$1 name=$2 lower
    lower=$(release_tree "$release")
    mkdir -p "$work/$name/upper" "$work/$name/work" "$work/$name/root"
    mount -t overlay overlay -o "lowerdir=$lower,upperdir=$work/$name/upper,workdir=$work/$name/work" "$work/$name/root"
    mounted+=("$work/$name/root")
    tree_root=$work/$name/root
}

# in_tree ROOT COMMAND...: COMMAND chrooted into ROOT, with /proc, /sys and /dev mounted in a
# mount and PID namespace of its own: the mounts and every process started inside go with it.
in_tree() {
    local root=$1
    shift
    unshare --mount --pid --fork --kill-child -- sh -ec '
        root=$1; shift
        mount -t proc proc "$root/proc"
        mount --rbind /sys "$root/sys"
        mount --rbind /dev "$root/dev"
        exec chroot "$root" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
            DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8 HOME=/root "$@"' sh "$root" "$@"
}

# sources_entry URI KEYRING: the sources entry docs/operating.md gives operators, with the URI of
# the repository under test (and, off the device, another keyring path).
sources_entry() {
    sed "s|^URIs: .*|URIs: $1|; s|^Signed-By: /etc/apt/keyrings/geoattrd-archive-keyring.gpg$|Signed-By: $2|" <<<"$doc_sources"
}

# doc_block FILE: the lines of the geoattrd.sources heredoc in FILE's install instructions.
doc_block() {
    awk '/^cat >\/etc\/apt\/sources.list.d\/geoattrd.sources <<.EOF.$/ { on = 1; next }
        on && /^EOF$/ { exit } on { print }' "$1"
}

# start_server DIR: serves DIR on 127.0.0.1 with an ephemeral port, set in $port.
start_server() {
    python3 -u -m http.server --bind 127.0.0.1 --directory "$1" 0 >"$work/http.log" 2>&1 &
    server_pid=$!
    port=
    for _ in $(seq 1 100); do
        port=$(sed -n 's/^Serving HTTP on 127.0.0.1 port \([0-9]*\) .*/\1/p' "$work/http.log")
        [ -n "$port" ] && break
        kill -0 "$server_pid" 2>/dev/null || break
        sleep 0.05
    done
    [ -n "$port" ] || { cat "$work/http.log" >&2; echo "debian-install-test: the HTTP server did not start" >&2; exit 1; }
}

# private_apt DIR TOOL ARGUMENT...: apt-get or apt-cache with state of its own in DIR, on the
# host: the machine's own sources, lists and package database are neither read nor changed.
private_apt() {
    local dir=$1 tool=$2
    shift 2
    mkdir -p "$dir/lists/partial" "$dir/cache/archives/partial" "$dir/sources.list.d" "$dir/preferences.d"
    touch "$dir/status" "$dir/sources.list"
    "$tool" -o Dir::Etc::sourcelist="$dir/sources.list" -o Dir::Etc::sourceparts="$dir/sources.list.d" \
        -o Dir::Etc::preferencesparts="$dir/preferences.d" -o Dir::State::Lists="$dir/lists" -o Dir::Cache="$dir/cache" \
        -o Dir::State::status="$dir/status" -o Debug::NoLocking=1 -o APT::Sandbox::User=root "$@"
}

# rotation_check RELEASE: a key rotation as docs/building.md describes it, on a device of
# RELEASE: a repository signed by key 1 is installed from; the next keyring package (keys 1 and
# 2, still signed by 1) arrives by apt upgrade; the repository signed by key 2 alone then
# updates cleanly, and once its keyring (key 2 alone) is installed, a newer repository signed by
# the retired key 1 is refused.
rotation_check() {
    local release=$1 root home1 home2 log step version fpr1 debs=()
    log=$work/rotation-$release.log
    # geoattrd is the one package make-apt-repo.sh requires; the keyring package is what changes.
    mapfile -t debs < <(find "$repo/pool" -name 'geoattrd_*_amd64.deb')
    overlay_tree "$release" "rotation-$release"
    root=$tree_root
    home1=$work/rotation-$release/key1 home2=$work/rotation-$release/key2
    mkdir -m 0700 "$home1" "$home2"
    gnupg_homes+=("$home1" "$home2")
    gpg --homedir "$home1" --batch --quiet --passphrase '' --quick-gen-key 'rotation test key 1' ed25519 sign 0 2>/dev/null
    gpg --homedir "$home2" --batch --quiet --passphrase '' --quick-gen-key 'rotation test key 2' ed25519 sign 0 2>/dev/null
    fpr1=$(gpg --homedir "$home1" --batch --quiet --with-colons --list-secret-keys 2>/dev/null | awk -F: '$1 == "fpr" { print $10; exit }')
    # The repositories the rotation publishes, one after another, at one URI. Each one's files
    # a second newer than the last one's: python's server answers apt's If-Modified-Since by the
    # files' times, and repositories made within a second would look unchanged.
    make_repo() {
        local name=$1 home=$2 version=$3
        shift 3
        env GEOATTRD_REPO_GNUPGHOME="$home" GEOATTRD_KEYRING_VERSION="$version" "$@" \
            bash scripts/make-apt-repo.sh "$work/rotation-$release/$name" "${debs[@]}" >/dev/null 2>>"$log"
        find "$work/rotation-$release/$name" -exec touch -h -d "@$((rotation_start + name))" {} +
    }
    local rotation_start
    rotation_start=$(date +%s)
    make_repo 1 "$home1" 2026.1
    gpg --homedir "$home2" --export | gpg --homedir "$home1" --batch --quiet --import 2>/dev/null
    make_repo 2 "$home1" 2026.2 GEOATTRD_REPO_KEY="$fpr1"
    make_repo 3 "$home2" 2026.3
    # What an attacker holding the retired key could publish after the rotation.
    make_repo 4 "$home1" 2026.4 GEOATTRD_REPO_KEY="$fpr1"
    publish() { ln -sfn "$work/rotation-$release/$1" "$www/rotation-$release"; }
    update() { in_tree "$root" apt-get -o Dir::Etc::sourcelist=/dev/null update >"$log.$1" 2>&1; }
    install -d -m 0755 "$root/etc/apt/keyrings"
    cp "$work/rotation-$release/1/geoattrd-archive-keyring.gpg" "$root/etc/apt/keyrings/"
    sources_entry "http://127.0.0.1:$port/rotation-$release" /etc/apt/keyrings/geoattrd-archive-keyring.gpg \
        >"$root/etc/apt/sources.list.d/geoattrd.sources"
    step=
    publish 1
    if ! update 1 || [ -n "$(apt_trouble "$log.1")" ]; then step="update from the repository signed by key 1"
    elif ! in_tree "$root" apt-get install -y geoattrd-archive-keyring >>"$log" 2>&1 </dev/null; then step="install of the keyring package 2026.1"
    elif publish 2 && { ! update 2 || [ -n "$(apt_trouble "$log.2")" ]; }; then step="update from the repository with keys 1 and 2, signed by 1"
    elif ! in_tree "$root" apt-get upgrade -y >>"$log" 2>&1 </dev/null; then step="apt-get upgrade to the keyring package 2026.2"
    elif publish 3 && { ! update 3 || [ -n "$(apt_trouble "$log.3")" ]; }; then step="update from the repository signed by key 2 alone"
    elif ! in_tree "$root" apt-get upgrade -y >>"$log" 2>&1 </dev/null; then step="apt-get upgrade to the keyring package 2026.3"
    # apt 2.6 refuses with warnings and keeps the old lists, exiting 0: the refusal is the check.
    elif publish 4 && { update 4; ! grep -qE '^(W|E): .*(NO_PUBKEY|[Ss]ignature)' "$log.4"; }; then
        step="the retired key 1 is not refused as a signature apt cannot check"
    fi
    version=$(in_tree "$root" dpkg-query -W -f '${Version}' geoattrd-archive-keyring 2>/dev/null || true)
    if [ -z "$step" ] && [ "$version" = 2026.3 ] &&
        cmp -s "$root/etc/apt/keyrings/geoattrd-archive-keyring.gpg" "$work/rotation-$release/3/geoattrd-archive-keyring.gpg"; then
        pass "$release: key rotation: key 2 arrived by apt upgrade (keyring 2026.1, 2026.2, 2026.3), key 1 then refused"
    else
        fail "$release: key rotation: ${step:-the keyring on the device is not the last one published (version ${version:-none})}"
        for file in "$log" "$log".*; do [ -f "$file" ] && tail -n 8 "$file"; done
    fi
    ln -sfn "$repo" "$www/rotation-$release"
}

# daemon_serves ROOT LOG: the installed geoattrd run by hand in ROOT against the tree's own gpsd
# (scripts/lib/apt-repo-daemon.sh), through gpsfake replaying share/tracks/demo.nmea; true once
# its socket serves FR-IDF. gpsfake is taken alone out of the tree's release of gpsd-clients,
# whose other dependencies (GTK, matplotlib) a device does not need, and which goes with the
# release's python3-gps. What it printed is in LOG.
daemon_serves() {
    local root=$1 log=$2 port
    rm -rf "$root/root/daemon" && mkdir -p "$root/root/daemon"
    cp share/tracks/demo.nmea "$root/root/daemon/demo.nmea"
    cp scripts/lib/apt-repo-daemon.sh "$root/root/daemon/run.sh"
    port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    in_tree "$root" sh -ec 'cd /root/daemon && apt-get download -qq gpsd-clients >/dev/null &&
        dpkg-deb --fsys-tarfile gpsd-clients_*.deb | tar -x -C / ./usr/bin/gpsfake && rm gpsd-clients_*.deb' >"$log" 2>&1 ||
        { echo "gpsfake could not be taken from the tree's gpsd-clients" >>"$log"; return 1; }
    in_tree "$root" bash /root/daemon/run.sh "$port" >>"$log" 2>&1
}
