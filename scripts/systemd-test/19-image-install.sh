# shellcheck shell=bash
# Section 19 of scripts/systemd-test.sh (sourced by it): the install into an image, then its first
# boot. Before the boot, geoattrd (and geoattrd-geodata when there is one, and the keyring package
# as docs/operating.md installs it) is installed into the tree from the repository by `apt-get
# install` in a chroot with no /proc mounted, as docs/operating.md's "An image built offline" has
# it: no systemd running, and no policy-rc.d either (the documents promise that the install starts
# nothing without one), in a network namespace of its own whose loopback serves the repository.
# Then:
#   - the install succeeds, and geoattrd's maintainer scripts print nothing: no warning at all;
#   - no process of the tree is left running, none of them geoattrd, and no socket in the image's
#     /run (the postinst never starts the daemon);
#   - geoattrd.socket and geoattrd-gpsd.socket are enabled for the first boot (their links in
#     sockets.target.wants);
# and after the first boot (section_19, with gpsd serving): both sockets listen and the API
# answers `geoattrctl status` through the socket, which starts the daemon.
# When chosen, it replaces the offline install (install.sh) as the way the package gets in.

# tree_processes: "PID COMMAND" of each process whose root is the tree's.
tree_processes() {
    local dir seen
    for dir in /proc/[0-9]*; do
        seen=$(readlink "$dir/root" 2>/dev/null) || continue
        [ "$seen" = "$root" ] && echo "${dir#/proc/} $(cat "$dir/comm" 2>/dev/null || echo '?')"
    done
    return 0
}
# script_output LOG: the lines the maintainer scripts of geoattrd's packages printed in an apt or
# dpkg log: what comes after dpkg's "Preparing to unpack .../geoattrd..." (the preinst) or
# "Setting up geoattrd..." (the postinst) and before dpkg's next line of its own; and any line
# anywhere that starts with "geoattrd:", as every message of theirs does.
script_output() {
    awk '
        /^(Preparing to unpack|Unpacking|Selecting previously unselected|Setting up|Processing triggers|Removing|Purging|\(Reading database)/ {
            ours = ($0 ~ /^Preparing to unpack .*\/geoattrd[a-z-]*_/ || $0 ~ /^Setting up geoattrd[a-z-]* \(/)
            next
        }
        ours || /^geoattrd[a-z-]*:/ { print }' "$1"
}

# image_install: the install into the tree before its first boot, and what it must leave.
image_install() {
    local rc=0 log=$run/image-install.log before wants unit target printed left geoattrds=() users sockets apt_said exe
    note_index
    publish_repo "$deb" ${geodata:+"$geodata"}
    echo "systemd-test: section 19: installing $(wanted_packages) into the tree by $(install_words install) in a chroot without /proc"
    if mountpoint -q "$root/proc" || [ -n "$(ls -A "$root/proc" 2>/dev/null)" ]; then
        fail "the tree's /proc is not empty before the install: the chroot would not be without /proc"
    fi
    before=$(tree_processes)
    [ -z "$before" ] || info "processes of the tree before the install (none expected): $(paste -sd ',' <<<"$before")"
    mkdir -p "$root$repo_mount"
    mount --bind "$run/repo" "$root$repo_mount"
    mount -o remount,bind,ro "$root$repo_mount"
    # shellcheck disable=SC2046
    unshare --net -- sh -c 'ip link set lo up && exec chroot "$1" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        HOME=/root LANG=C.UTF-8 sh -ec "$2"' sh "$root" "$(install_program install $(wanted_packages))" >"$log" 2>&1 </dev/null || rc=$?
    umount "$root$repo_mount"
    if [ "$rc" != 0 ]; then
        fail "$(install_words install) $(wanted_packages) in a chroot without /proc exits $rc:"
        tail -n 40 "$log" | indent
        echo "systemd-test: nothing installed to boot" >&2
        exit 1
    fi
    printed=$(script_output "$log")
    if [ -z "$printed" ]; then
        pass "$(install_words install) $(wanted_packages) in a chroot without /proc: exit 0, nothing printed by geoattrd's maintainer scripts ($(grep -c . "$log") lines of apt and dpkg)"
    else
        fail "$(install_words install) $(wanted_packages) in a chroot without /proc: geoattrd's maintainer scripts printed:"
        indent <<<"$printed"
    fi
    apt_said=$(grep -E '^(W|E|Warning|Error):' "$log" || true)
    [ -z "$apt_said" ] || { info "apt's own warnings during that install:"; indent <<<"$apt_said"; }
    left=$(tree_processes)
    for exe in /proc/[0-9]*/exe; do
        [ "$(readlink "$exe" 2>/dev/null || true)" = "$root/usr/bin/geoattrd" ] && geoattrds+=("$(basename "$(dirname "$exe")")")
    done
    # A daemon that ran and exited leaves its socket behind (the image's /run is a directory of the
    # tree here, not yet the boot's tmpfs).
    sockets=$(find "$root/run" -type s 2>/dev/null | sed "s|^$root||" | paste -sd ' ')
    if [ -z "$left" ] && [ ${#geoattrds[@]} -eq 0 ] && [ -z "$sockets" ]; then
        pass "after the install no process of the tree runs, none of them geoattrd, and no socket in the image's /run"
    else
        fail "after the install: processes of the tree still running: ${left:-none}; geoattrd processes: ${geoattrds[*]:-none}; sockets in /run: ${sockets:-none}"
    fi
    wants=()
    for unit in geoattrd.socket geoattrd-gpsd.socket; do
        target=$(readlink "$root/etc/systemd/system/sockets.target.wants/$unit" 2>/dev/null || true)
        case $target in
        */systemd/system/"$unit") wants+=("$unit") ;;
        *)
            fail "the install did not enable $unit for the first boot (sockets.target.wants/$unit: ${target:-missing}); enabled here so that the boot goes on"
            mkdir -p "$root/etc/systemd/system/sockets.target.wants"
            ln -sfn "/lib/systemd/system/$unit" "$root/etc/systemd/system/sockets.target.wants/$unit"
            ;;
        esac
    done
    [ ${#wants[@]} -eq 2 ] && pass "geoattrd.socket and geoattrd-gpsd.socket are enabled for the first boot (links in sockets.target.wants)"
    users=$(for name in geoattrd geoattrd-gpsd; do grep -q "^$name:" "$root/etc/passwd" && echo "$name"; done | paste -sd ' ')
    info "users in the image's /etc/passwd after the install: ${users:-neither geoattrd nor geoattrd-gpsd} (systemd-sysusers.service makes what is missing at boot)"
}

# section_19: after the first boot of that image, the sockets listen and the API answers.
section_19() {
    local sockets status
    sockets=$(ct systemctl is-active geoattrd.socket geoattrd-gpsd.socket | tr '\n' ' ' || true)
    if status=$(ct timeout 30 geoattrctl status 2>&1) && [[ $status == *'"state"'* ]] && [ "$sockets" = "active active " ]; then
        pass "the image's first boot: geoattrd.socket and geoattrd-gpsd.socket active, geoattrctl status answered through the socket (geoattrd.service $(ct systemctl is-active geoattrd.service || true))"
    else
        fail "the image's first boot: sockets '$sockets', geoattrctl status: $(tail -c 300 <<<"$status")"
    fi
}
