# shellcheck shell=bash
# Section 14 of scripts/systemd-test.sh (sourced by it):
#  14. an upgrade over what a client planted in the old layout (section 9's group-writable
#      /run/geoattrd, made again here, the textfile directory group-writable too;
#      outputs.env_file set): a
#      directory of its own at the env file's path holding a link to a directory of root's, a FIFO,
#      a symbolic link to a file of root's, a stray file in /run/geoattrd/textfile; with
#      geoattrd.service enabled, the package installed again (`apt-get install --reinstall`)
#      leaves the service running without a client, removes each object and follows none (the
#      targets unchanged), geoattrd then
#      writes the env file where the directory was, the textfile directory holds its own file alone,
#      and the layout holds after the next start.
# It needs section 8's client1 and section 12's textfile directory (outputs.prometheus_file).

# Section 9's group-writable /run/geoattrd, and the textfile directory group-writable as well: a
# client replaces the env file by a directory of its own holding a link to a directory of root's,
# and leaves a FIFO, a symbolic link to a file of root's and a stray file in the textfile
# directory. No restart in between: RuntimeDirectory= would re-own all of it to geoattrd.
section_14() {
    local started=$SECONDS config=$root/etc/geoattrd/geoattrd.yaml envfile=/run/geoattrd/geo.env textfile=/run/geoattrd/textfile
    local planted=() left=() upgrade targets got log pid
    yaml_set "$config" outputs "env_file: $envfile" >/dev/null ||
        fail "the installed geoattrd.yaml has no outputs.env_file to set"
    ct sh -c 'printf secret >/root/victim14 && chmod 0600 /root/victim14 &&
        mkdir -p /root/victimdir14 && printf kept >/root/victimdir14/kept && chmod 0700 /root/victimdir14'
    ct chgrp geoattr /run/geoattrd "$textfile"
    ct chmod 0770 /run/geoattrd
    ct chmod 2770 "$textfile"
    ct_as client1 sh -c "rm -f $envfile && mkdir $envfile && ln -s /root/victimdir14 $envfile/through" &&
        planted+=("a directory at $envfile")
    ct_as client1 mkfifo /run/geoattrd/planted.fifo && planted+=("a FIFO")
    ct_as client1 ln -s /root/victim14 /run/geoattrd/planted.link && planted+=("a symbolic link")
    ct_as client1 sh -c "echo 'geoattrd_location_info{geo_locality_name=\"elsewhere\"} 1' >$textfile/planted.prom" &&
        planted+=("a stray file in $textfile")
    if [ ${#planted[@]} -ne 4 ]; then
        fail "the old layout: client1 planted only ${planted[*]:-nothing} of a directory at $envfile, a FIFO, a symbolic link, a stray file in $textfile"
        return
    fi
    # Enabled, as docs/operating.md and the Collector recipe have it, so that it runs without a
    # client.
    ct systemctl enable geoattrd.service >/dev/null 2>&1 || true
    if ! ct_install reinstall geoattrd; then
        fail "$(install_words reinstall) over the client's objects failed:"
        printf '%s\n' "$installed" | indent
        return
    fi
    upgrade=$installed
    running=$(ct systemctl is-active geoattrd.service || true)
    if [ "$running" = active ]; then
        pass "$(install_words reinstall) with geoattrd.service enabled: the service runs again at once, before any client connects"
    else
        fail "$(install_words reinstall) with geoattrd.service enabled left it $running"
    fi
    [ "$(ct stat -c %F "$envfile" 2>/dev/null || true)" = directory ] && left+=("the directory at $envfile")
    ct test -e /run/geoattrd/planted.fifo -o -L /run/geoattrd/planted.fifo && left+=("the FIFO")
    ct test -e /run/geoattrd/planted.link -o -L /run/geoattrd/planted.link && left+=("the symbolic link")
    ct test -e "$textfile/planted.prom" -o -L "$textfile/planted.prom" && left+=("the stray file")
    targets="$(ct stat -c '%U:%G %a' /root/victim14 || true) $(ct cat /root/victim14 || true);$(ct stat -c '%U:%G %a' /root/victimdir14 || true) $(ct ls /root/victimdir14 || true)"
    if [ ${#left[@]} -eq 0 ] && [ "$targets" = "root:root 600 secret;root:root 700 kept" ]; then
        pass "$(install_words reinstall) over the old layout removed what client1 planted (${planted[*]}), following none: the links' targets unchanged; dpkg said $(grep -c '^geoattrd: removing ' <<<"$upgrade" || true) 'geoattrd: removing' line(s)"
    else
        fail "$(install_words reinstall) over the old layout left ${left[*]:-nothing}; the links' targets: '$targets' (expected 'root:root 600 secret;root:root 700 kept'); dpkg said:"
        printf '%s\n' "$upgrade" | indent
    fi
    # The next start (a client's request), then a fix: the env file is written where the directory
    # was.
    ct_as client1 timeout 30 geoattrctl get >/dev/null 2>&1 || true
    ct timeout 60 geoattrctl refresh --wait 30 >/dev/null 2>&1 || true
    for _ in $(seq 50); do [ "$(ct stat -c %F "$envfile" 2>/dev/null || true)" = "regular file" ] && break; sleep 0.2; done
    pid=$(ct systemctl show -p MainPID --value geoattrd.service)
    log=$( [ "${pid:-0}" != 0 ] && ct journalctl -q -o cat --no-pager _PID="$pid" || true)
    got="$(ct stat -c '%U %F' "$envfile" 2>&1 || true);$(ct stat -c '%U:%G %a' "$textfile" 2>&1 || true) $(ct ls -A "$textfile" 2>&1 | paste -sd ' ' || true)"
    if [ "$got" = "geoattrd regular file;geoattrd:geoattr-metrics 2750 geoattrd.prom" ] &&
        ct grep -q '^OTEL_RESOURCE_ATTRIBUTES=' "$envfile" && ! grep -q 'output file not written' <<<"$log"; then
        pass "after the upgrade and the next start geoattrd writes $envfile (a regular file of its own) and the textfile directory holds its geoattrd.prom alone (geoattrd:geoattr-metrics 2750); no 'output file not written'"
    else
        fail "after the upgrade and the next start: '$got' (expected 'geoattrd regular file;geoattrd:geoattr-metrics 2750 geoattrd.prom'); geoattrd's log:"
        { grep -E 'output|warning' <<<"$log" || true; } | tail -n 10 | indent
    fi
    layout_checks "after the upgrade over a client's objects and the next start"
    info "the upgrade-over-planted-objects checks took $((SECONDS - started)) s"
}
