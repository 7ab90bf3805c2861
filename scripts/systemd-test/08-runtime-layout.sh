# shellcheck shell=bash
# Sections 8 and 9 of scripts/systemd-test.sh (sourced by it), after section 1's first start:
#   8. the runtime layout, after the first start and after the restart: /run/geoattrd
#      geoattrd:geoattrd 0755, the socket geoattrd:geoattr 0660, the state file a regular file
#      geoattrd:geoattr-state 0660 (RuntimeDirectory= re-owns the tree it finds owned otherwise);
#      a client (client1, group geoattr) gets the attributes but can create nothing in
#      /run/geoattrd, write the state file or move the socket; a supervisor (super1, groups
#      geoattr and geoattr-state) pauses and resumes the daemon through the state file, written in
#      place; `geoattrctl doctor` finds the layout right; with a policy-rc.d that forbids it
#      (exit 101), a reinstall neither stops nor starts the package's units;
#   9. an upgrade from the old layout (/run/geoattrd geoattrd:geoattr 0770, no geoattr-state
#      group, a client's symbolic link at the state file's path): what a start does to it
#      (informational), then the package installed again (install.sh: `apt-get install
#      --reinstall` from the repository) repairs it without following the link,
#      and the layout holds after the next start.
# Section 4 checks the layout again after its restart. Section 9 needs section 8's client1.

# policy_reinstall: the package installed again under a policy-rc.d that answers 101: the daemon
# the socket started keeps its process, and the socket stays listening.
policy_reinstall() {
    local before after socket
    ct sh -c "printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod 0755 /usr/sbin/policy-rc.d"
    before=$(ct systemctl show -p MainPID --value geoattrd.service)
    if ct_install reinstall geoattrd; then
        after=$(ct systemctl show -p MainPID --value geoattrd.service)
        socket=$(ct systemctl is-active geoattrd.socket || true)
        if [ "$before" != 0 ] && [ "$after" = "$before" ] && [ "$socket" = active ]; then
            pass "$(install_words reinstall) under a policy-rc.d that answers 101: geoattrd (pid $before) neither stopped nor started, geoattrd.socket still active"
        else
            fail "$(install_words reinstall) under a policy-rc.d that answers 101: geoattrd's pid $before, then $after; geoattrd.socket $socket"
        fi
    else
        fail "$(install_words reinstall) under a policy-rc.d that answers 101 failed:"
        printf '%s\n' "$installed" | indent
    fi
    ct rm -f /usr/sbin/policy-rc.d
}

section_8() {
    layout_checks "after the first start"
    ct useradd --no-create-home --shell /usr/sbin/nologin --groups geoattr client1
    ct useradd --no-create-home --shell /usr/sbin/nologin --groups geoattr,geoattr-state super1
    if got=$(ct_as client1 timeout 20 geoattrctl get 2>&1) && [[ $got == *'"geo.location.lat"'* ]]; then
        pass "client1 (group geoattr): geoattrctl get answers"
    else
        fail "client1 (group geoattr): geoattrctl get: $(printf '%s' "$got" | tail -c 300)"
    fi
    policy_reinstall
    # Each must fail: a file, a FIFO, a symbolic link or a socket of the client's own in
    # /run/geoattrd.
    planted=()
    ct_as client1 touch /run/geoattrd/planted 2>/dev/null && planted+=(file)
    ct_as client1 mkfifo /run/geoattrd/planted.fifo 2>/dev/null && planted+=(FIFO)
    ct_as client1 ln -s /etc/passwd /run/geoattrd/planted.link 2>/dev/null && planted+=("symbolic link")
    ct_as client1 python3 -c 'import socket; socket.socket(socket.AF_UNIX).bind("/run/geoattrd/planted.sock")' 2>/dev/null &&
        planted+=(socket)
    left=$(ct find /run/geoattrd -mindepth 1 -name 'planted*' | tr '\n' ' ' || true)
    if [ ${#planted[@]} -eq 0 ] && [ -z "$left" ]; then
        pass "client1 cannot create anything in /run/geoattrd (a file, a FIFO, a symbolic link, a socket: all refused)"
    else
        fail "client1 created in /run/geoattrd: ${planted[*]} ($left)"
    fi
    before=$(ct cat /run/geoattrd/state 2>&1 || true)
    if ! ct_as client1 sh -c 'echo background > /run/geoattrd/state' 2>/dev/null &&
        ! ct_as client1 sh -c 'echo background >> /run/geoattrd/state' 2>/dev/null &&
        [ "$(ct cat /run/geoattrd/state 2>&1 || true)" = "$before" ]; then
        pass "client1 cannot write the state file (refused, its content unchanged)"
    else
        fail "client1 wrote the state file: now '$(ct cat /run/geoattrd/state 2>&1 | head -c 100)'"
    fi
    moved=()
    ct_as client1 mv /run/geoattrd/geoattrd.sock /run/geoattrd/aside.sock 2>/dev/null && moved+=("renamed it")
    ct_as client1 rm -f /run/geoattrd/geoattrd.sock 2>/dev/null && moved+=("removed it")
    if [ ${#moved[@]} -eq 0 ] && [ "$(ct stat -c %F /run/geoattrd/geoattrd.sock 2>&1 || true)" = socket ] &&
        ct_as client1 timeout 20 geoattrctl get >/dev/null 2>&1; then
        pass "client1 cannot move or remove the socket (mv and rm refused; it still answers)"
    else
        fail "client1 and the socket: ${moved[*]:-refused}; now $(ct ls -l /run/geoattrd 2>&1 | tr '\n' ';')"
    fi
    supervised=()
    if ct_as super1 sh -c 'echo background > /run/geoattrd/state' && took=$(wait_state background); then
        supervised+=("background after ${took} s")
        if ct_as super1 sh -c 'echo foreground > /run/geoattrd/state' && took=$(wait_state foreground); then
            supervised+=("foreground again after ${took} s")
        fi
    fi
    if [ ${#supervised[@]} -eq 2 ] && ! ct_as super1 touch /run/geoattrd/planted 2>/dev/null; then
        pass "super1 (geoattr, geoattr-state) writes the state file in place: geoattrd reports ${supervised[0]}, ${supervised[1]}; it cannot create a file beside it"
    else
        fail "super1 and the state file: ${supervised[*]:-no change reported}; geoattrd reports $(daemon_state)"
    fi
    doctor=$(ct timeout 60 geoattrctl doctor --gpsd 127.0.0.1:2947 --timeout 20 2>&1 || true)
    if printf '%s\n' "$doctor" | grep -q '^\[ok  \] runtime dir: /run/geoattrd geoattrd:geoattrd 0755' &&
        printf '%s\n' "$doctor" | grep -q '^\[ok  \] state file: /run/geoattrd/state geoattrd:geoattr-state 0660' &&
        ! printf '%s\n' "$doctor" | grep -E '^\[(warn|FAIL)\] (runtime dir|state file)' >/dev/null; then
        pass "geoattrctl doctor: $(printf '%s\n' "$doctor" | grep -E '^\[ok  \] (runtime dir|state file)' | sed 's/^\[ok  \] //' | paste -sd ';' | sed 's/;/; /g')"
    else
        fail "geoattrctl doctor does not find the runtime layout right:"
        printf '%s\n' "$doctor" | indent
    fi
}

section_9() {
    # What the previous version left: /run/geoattrd geoattrd:geoattr 0770 (its tmpfiles.d line), no
    # geoattr-state group, and a client that used its write access to replace the state file by a
    # symbolic link to a file of root's.
    ct sh -c 'printf secret >/root/victim && chmod 0600 /root/victim'
    ct chgrp geoattr /run/geoattrd
    ct chmod 0770 /run/geoattrd
    if ct_as client1 sh -c 'rm -f /run/geoattrd/state && ln -s /root/victim /run/geoattrd/state'; then
        # RuntimeDirectory='s fix-up at a start, with the directory's group not the service's.
        ct systemctl restart geoattrd.service || true
        info "RuntimeDirectory= with /run/geoattrd geoattrd:geoattr 0770 (the old layout), at systemctl restart geoattrd: /run/geoattrd became $(ct stat -c '%U:%G %a' /run/geoattrd), the socket $(ct stat -c '%U:%G %a' /run/geoattrd/geoattrd.sock), the client's link $(ct stat -c '%U:%G' /run/geoattrd/state)"
        ct groupdel geoattr-state
        if ct_install reinstall geoattrd; then
            upgrade=$installed
            after=$(ct stat -c '%U:%G %a %F' /run/geoattrd /run/geoattrd/state 2>&1 | paste -sd ';' || true)
            victim=$(ct stat -c '%U:%G %a' /root/victim)$(ct cat /root/victim)
            case $after in
            "geoattrd:geoattrd 755 directory;geoattrd:geoattr-state 660 regular empty file") layout_ok=yes ;;
            *) layout_ok=no ;;
            esac
            if [ "$layout_ok" = yes ] && [ "$victim" = "root:root 600secret" ] &&
                [[ $upgrade == *"add device supervisors to it (usermod -aG geoattr-state USER)"* ]]; then
                pass "$(install_words reinstall) over the old layout: /run/geoattrd geoattrd:geoattrd 0755, the client's link replaced by an empty regular file geoattrd:geoattr-state 0660, its target untouched; the operator is told to add supervisors to geoattr-state"
            else
                fail "$(install_words reinstall) over the old layout: /run/geoattrd and the state file: '$after'; the link's target: '$victim'; dpkg said:"
                printf '%s\n' "$upgrade" | indent
            fi
        else
            fail "$(install_words reinstall) over the old layout failed:"
            printf '%s\n' "$installed" | indent
        fi
        if got=$(ct_as client1 timeout 30 geoattrctl get 2>&1) && [[ $got == *'"geo.location.lat"'* ]]; then
            pass "after the upgrade, client1's geoattrctl get starts geoattrd again and is answered"
        else
            fail "after the upgrade, client1's geoattrctl get: $(printf '%s' "$got" | tail -c 300)"
        fi
        layout_checks "after the upgrade and the next start"
    else
        fail "the old layout: client1 could not replace the state file in a directory geoattrd:geoattr 0770"
    fi
}
