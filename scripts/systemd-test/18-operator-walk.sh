# shellcheck shell=bash
# Section 18 of scripts/systemd-test.sh (sourced by it), in a container of its own:
#  18. the operator's walk, in a container booted afresh, installing from the repository under a
#      running systemd (install.sh): on Debian 12 (only when PREVIOUS_DEB names the previous
#      release's package) that release from a repository that holds it (with this tree's
#      geoattrd-geodata when there is one and it does not break that release; else the geodata
#      comes with the upgrade), on Debian 13, where no earlier release installs, this one;
#      outputs as docs/operating.md's textfile recipe,
#      `systemctl enable --now geoattrd`, the first fix; on Debian 12 the repository published
#      again with DEB and `apt upgrade` (the edited conffile kept); the same package again
#      (`apt-get install --reinstall`), enabled and then running but not enabled: each time
#      geoattrd.service runs again before any client connects, as the new program, and the
#      textfile moves on with the next fix; a reload with a
#      typo (schedule.tll_s) fails, systemctl status names the key and the daemon keeps serving,
#      the corrected one succeeds and its refresh.burst is in force; the troubleshooting rows
#      systemd can provoke: 429 refresh_budget_spent then refresh.burst raised and a reload (the
#      next refresh succeeds at once), a uid rule of none (the 403 and doctor's access row name it;
#      the changed rule and a reload let the user in), the state file replaced by a rename as root
#      (doctor warns; systemd-tmpfiles --create geoattrd.conf repairs it), geoattrd-geodata removed
#      under the running daemon (doctor says to install it); `dpkg -r` (no unit active,
#      /etc/geoattrd and the groups kept) and `dpkg -P` (/etc/geoattrd, /var/lib/geoattrd,
#      /run/geoattrd and the groups gone, the dropped memberships said, no not-found unit left).

# From the previous release (or this one) to this one and off the device again, in a container
# booted afresh (nothing of sections 1-17 in it), as an operator does it: apt while systemd runs, the node
# exporter recipe's outputs, a reload with a typo, the troubleshooting table's rows that systemd
# can provoke, remove, purge.
# walk_updated: the textfile's geoattrd_location_updated_timestamp_seconds, empty without one.
walk_updated() { ct sed -n 's/^geoattrd_location_updated_timestamp_seconds \([0-9]*\)$/\1/p' "$1" 2>/dev/null || true; }
# walk_status FIELD: a field of geoattrctl status (as root).
walk_status() {
    ct timeout 10 geoattrctl status 2>/dev/null | python3 -c 'import json, sys; print(json.load(sys.stdin)[sys.argv[1]])' "$1" 2>/dev/null || true
}
# walk_doctor [USER]: geoattrctl doctor's rows, as USER (default root).
walk_doctor() { ct_as "${1:-root}" timeout 60 geoattrctl doctor --gpsd 127.0.0.1:2947 --timeout 20 2>&1 || true; }
# walk_moves_on LABEL TEXTFILE: a forced fix as root, then the textfile must carry a later update.
walk_moves_on() {
    local label=$1 textfile=$2 before after refreshed rc=0
    before=$(walk_updated "$textfile")
    # The timestamp counts seconds: the next fix is a second later at least.
    sleep 1
    refreshed=$(ct timeout 60 geoattrctl refresh --wait 30 2>&1) || rc=$?
    for _ in $(seq 50); do
        after=$(walk_updated "$textfile")
        [ -n "$after" ] && [ "$after" -gt "${before:-0}" ] && break
        sleep 0.2
    done
    if [ "$rc" = 0 ] && [ -n "$after" ] && [ "$after" -gt "${before:-0}" ]; then
        pass "$label: the next fix (geoattrctl refresh --wait 30 as root) moved $textfile on: geoattrd_location_updated_timestamp_seconds ${before:-none} -> $after"
    else
        fail "$label: after geoattrctl refresh --wait 30 (exit $rc: $(tail -c 200 <<<"$refreshed")) $textfile says updated ${after:-nothing}, before ${before:-nothing}"
    fi
}
# walk_install LABEL TEXTFILE MODE: this tree's package by install_program's MODE (upgrade: with
# the packages in walk_with, which it empties; reinstall), then the service must run again
# without a client, as this version, and the textfile move on with the next fix.
walk_with=()
walk_install() {
    local label=$1 textfile=$2 mode=$3 out running pid exe version wanted packaged
    wanted=$(dpkg-deb -f "$deb" Version)
    if [ "$mode" = upgrade ]; then set -- "${walk_with[@]}"; else set -- geoattrd; fi
    if ! ct_install "$mode" "$@"; then
        fail "$label: $(install_words "$mode") $* failed:"
        indent <<<"$installed"
        return
    fi
    out=$installed
    walk_with=()
    # Before anything connects to the socket.
    running=$(ct systemctl is-active geoattrd.service || true)
    pid=$(ct systemctl show -p MainPID --value geoattrd.service)
    exe=$( [ "${pid:-0}" != 0 ] && ct readlink "/proc/$pid/exe" || true)
    version=$(ct geoattrctl --version 2>&1 || true)
    packaged=$(ct dpkg-query -W -f '${Version}' geoattrd 2>&1 || true)
    if [ "$running" = active ] && [ "$exe" = /usr/bin/geoattrd ] && [[ $version == "$wanted "* || $version == "$wanted" ]] &&
        [ "$packaged" = "$wanted" ]; then
        pass "$label: $(install_words "$mode"): geoattrd $packaged installed, geoattrd.service active before any client connects (pid $pid, $exe), geoattrctl --version: $version"
    else
        fail "$label: $(install_words "$mode"): geoattrd ${packaged:-?} installed, geoattrd.service $running, its program '${exe:-none}', geoattrctl --version '$version' (expected $wanted); dpkg said:"
        indent <<<"$out"
    fi
    walk_moves_on "$label" "$textfile"
}
operator_walk() {
    local started=$SECONDS config=$root/etc/geoattrd/geoattrd.yaml from installs=() out yaml set textfile took pid rc
    local status refused doctor row before after uid units left=() kept=() printed breaks first=$deb
    # Debian 12: from the previous release. Debian 13: no earlier release installs there (the
    # previous one links libgps28), so the walk starts at this one.
    if [ "$release" != bookworm ]; then
        echo "NOTE  section 18 on $release: no earlier release installs here; the walk starts at this one"
    elif [ -z "$previous" ]; then
        echo "NOTE  section 18 (the operator's walk) skipped: PREVIOUS_DEB is not set (PREVIOUS_DEB=\$(bash scripts/previous-release-deb.sh))"
        return
    else
        first=$previous
    fi
    from=$(dpkg-deb -f "$first" Version)
    poweroff_container
    fresh_overlay
    write_track

    # 1. The first release, the textfile recipe's outputs, enabled. This tree's geodata goes in
    # beside it unless it breaks that release (a new index format): then it comes with the upgrade.
    installs=("$first")
    walk_with=()
    if [ -n "$geodata" ]; then
        breaks=$(dpkg-deb -f "$geodata" Breaks | sed -n 's/^.*geoattrd (<< \([^)]*\)).*$/\1/p')
        if [ -n "$breaks" ] && dpkg --compare-versions "$from" lt "$breaks"; then
            walk_with=(geoattrd-geodata)
        else
            installs+=("$geodata")
        fi
    fi
    publish_repo "${installs[@]}"
    echo "systemd-test: section 18, the operator's walk: a fresh boot"
    boot_container
    start_gpsd
    set -- geoattrd geoattrd-archive-keyring
    [ ${#installs[@]} -eq 1 ] || set -- "$@" geoattrd-geodata
    if ! ct_install install "$@"; then
        fail "the walk: $(install_words install) $* failed:"
        indent <<<"$installed"
        return
    fi
    yaml=$(recipe_block docs/operating.md "**The location through node_exporter's textfile collector.**" yaml)
    textfile=$(sed -n 's/^ *prometheus_file: *\([^ ]*\).*$/\1/p' <<<"$yaml")
    if ! set=$(yaml_set "$config" outputs "$yaml" 2>&1) || [ -z "$textfile" ]; then
        fail "the walk: docs/operating.md's textfile recipe cannot be applied to $from's geoattrd.yaml: $set"
        return
    fi
    took=$SECONDS
    ct systemctl enable --now geoattrd.service >/dev/null 2>&1 || true
    for _ in $(seq 90); do
        [ -n "$(walk_updated "$textfile")" ] && break
        sleep 0.5
    done
    if [ "$(ct systemctl is-active geoattrd.service || true)" = active ] && [ -n "$(walk_updated "$textfile")" ] &&
        [[ $(ct timeout 20 geoattrctl get 2>&1 || true) == *'"geo.location.lat"'* ]]; then
        pass "geoattrd $from${installs[1]:+ with $(basename "${installs[1]}")} installed ($(install_words install)), outputs as docs/operating.md's textfile recipe ($(paste -sd ',' <<<"$set" | sed 's/,/, /g')), systemctl enable --now geoattrd: the first fix after $((SECONDS - took)) s, $textfile written"
    else
        fail "geoattrd $from, enable --now: geoattrd.service $(ct systemctl is-active geoattrd.service || true), $textfile: '$(ct cat "$textfile" 2>&1 | head -c 200)'"
    fi

    # 2, 3. The upgrade (the repository moves on to this tree's packages), and the same package
    # again.
    if [ "$first" != "$deb" ]; then
        # gpsd's guard enabled before the upgrade: it keeps its table through it, and comes out of
        # it with this release's watcher (a guard of 0.4 was a oneshot without one).
        ct systemctl enable --now geoattrd-gpsd-guard.service >/dev/null 2>&1 || fail "the walk: geoattrd-gpsd-guard.service of $from did not start"
        publish_repo "$deb" ${geodata:+"$geodata"}
        walk_install "upgrade $from -> $(dpkg-deb -f "$deb" Version)" "$textfile" upgrade
        walk_guard_after_upgrade "$from"
        ct systemctl disable --now --quiet geoattrd-gpsd-guard.service || true
    fi
    walk_install "reinstall" "$textfile" reinstall
    # Running without being enabled (started by a client through its socket, or by hand): it runs
    # again too. The link goes by hand: `systemctl disable` would take the socket with it (Also=).
    ct rm -f /etc/systemd/system/multi-user.target.wants/geoattrd.service
    ct systemctl daemon-reload
    if [ "$(ct systemctl is-enabled geoattrd.service || true)" = disabled ] && [ "$(ct systemctl is-active geoattrd.service || true)" = active ]; then
        walk_install "reinstall, geoattrd.service running but not enabled" "$textfile" reinstall
    else
        fail "geoattrd.service could not be made running and not enabled: $(ct systemctl is-enabled geoattrd.service || true), $(ct systemctl is-active geoattrd.service || true)"
    fi
    ct systemctl enable --quiet geoattrd.service

    # 4. A reload refused for a typo, then a good one.
    pid=$(ct systemctl show -p MainPID --value geoattrd.service)
    sed -i 's/^schedule:$/schedule:\n  tll_s: 5/' "$config"
    rc=0
    out=$(ct systemctl reload geoattrd.service 2>&1) || rc=$?
    status=$(ct systemctl status geoattrd.service --no-pager --lines=20 2>&1 || true)
    if [ "$rc" != 0 ] && grep -q 'tll_s' <<<"$status"; then
        pass "schedule.tll_s (a typo) in geoattrd.yaml: systemctl reload geoattrd exits $rc, and systemctl status says: $(grep -m 1 'tll_s' <<<"$status" | sed 's/^ *//')"
    else
        fail "schedule.tll_s (a typo) in geoattrd.yaml: systemctl reload geoattrd exits $rc (expected non-zero: $(tail -c 200 <<<"$out")), systemctl status names tll_s: $(grep -c 'tll_s' <<<"$status" || true) line(s):"
        tail -n 12 <<<"$status" | indent
    fi
    if [ "$(ct systemctl is-active geoattrd.service || true)" = active ] &&
        [ "$(ct systemctl show -p MainPID --value geoattrd.service)" = "$pid" ] &&
        [[ $(ct timeout 20 geoattrctl get 2>&1 || true) == *'"geo.location.lat"'* ]]; then
        pass "after the refused reload geoattrd keeps serving: active, the same process ($pid), geoattrctl get answers"
    else
        fail "after the refused reload: geoattrd.service $(ct systemctl is-active geoattrd.service || true), pid $(ct systemctl show -p MainPID --value geoattrd.service) (was $pid), or geoattrctl get failed"
    fi
    sed -i '/^  tll_s: 5$/d' "$config"
    before=$(walk_status refresh_tokens)
    yaml_set "$config" refresh "burst: 1" >/dev/null || fail "the walk: no refresh.burst in geoattrd.yaml"
    rc=0
    out=$(ct systemctl reload geoattrd.service 2>&1) || rc=$?
    after=$(walk_status refresh_tokens)
    if [ "$rc" = 0 ] && [ "$after" = 1 ] && [ "${before:-0}" -gt 1 ]; then
        pass "the typo removed and refresh.burst 1: systemctl reload geoattrd exits 0 and the new burst is in force (refresh_tokens $before -> $after)"
    else
        fail "the typo removed and refresh.burst 1: systemctl reload geoattrd exits $rc ($(tail -c 200 <<<"$out")), refresh_tokens ${before:-?} -> ${after:-?} (expected 1)"
    fi

    # 5a. The refresh budget spent, then refresh.burst raised.
    local last=0 reloaded=0 next=0
    ct timeout 60 geoattrctl refresh --wait 30 >/dev/null 2>&1 || last=$?
    refused=$(ct timeout 20 geoattrctl refresh 2>&1 || true)
    yaml_set "$config" refresh "burst: 3" >/dev/null || true
    out=$(ct systemctl reload geoattrd.service 2>&1) || reloaded=$?
    took=$SECONDS
    ct timeout 60 geoattrctl refresh --wait 30 >/dev/null 2>&1 || next=$?
    if [ "$last$reloaded$next" = 000 ] && [[ $refused == *"429 refresh_budget_spent"* ]]; then
        pass "refresh budget: the refresh after the last token is refused ($(sed 's/^.*429/429/' <<<"$refused" | head -c 160)); refresh.burst 3 and systemctl reload: the next geoattrctl refresh --wait 30 succeeds at once ($((SECONDS - took)) s, the fix included)"
    else
        fail "refresh budget: the last token's refresh exits $last, the next says '$(head -c 200 <<<"$refused")' (429 refresh_budget_spent expected); refresh.burst 3: systemctl reload exits $reloaded ($(tail -c 160 <<<"$out")), the refresh after it $next"
    fi

    # 5b. A client refused by a uid rule, and the fix.
    ct useradd --no-create-home --shell /usr/sbin/nologin --groups geoattr walker || fail "the walk: useradd walker failed"
    uid=$(ct id -u walker)
    yaml_set "$config" access "rules: [\"uid:$uid=none\"]" >/dev/null || fail "the walk: no access.rules in geoattrd.yaml"
    ct systemctl reload geoattrd.service >/dev/null 2>&1 || true
    refused=$(ct_as walker timeout 20 geoattrctl get 2>&1 || true)
    doctor=$(walk_doctor walker)
    row=$(grep -E '^\[(ok  |warn|FAIL)\] access:' <<<"$doctor" || true)
    if [[ $refused == *"403"*"uid:$uid=none"* ]] && [[ $row == *"uid:$uid=none"* ]]; then
        pass "access.rules uid:$uid=none: walker's geoattrctl get is refused naming the rule ($(head -c 200 <<<"$refused")); doctor as walker: $(head -c 200 <<<"$row")"
    else
        fail "access.rules uid:$uid=none: walker's geoattrctl get said '$(head -c 300 <<<"$refused")'; doctor as walker's access row: '${row:-none}' (both should name uid:$uid=none)"
    fi
    yaml_set "$config" access "rules: [\"uid:$uid=locality\"]" >/dev/null || true
    rc=0
    ct systemctl reload geoattrd.service >/dev/null 2>&1 || rc=$?
    if [ "$rc" = 0 ] && ct_as walker timeout 20 geoattrctl get >/dev/null 2>&1; then
        pass "the rule changed to uid:$uid=locality and systemctl reload geoattrd: walker's geoattrctl get answers"
    else
        fail "the rule changed to uid:$uid=locality: systemctl reload exits $rc; walker's geoattrctl get: $(ct_as walker timeout 20 geoattrctl get 2>&1 | head -c 200 || true)"
    fi

    # 5c. The state file replaced by a rename as root, then tmpfiles.d.
    ct sh -c 'printf background >/run/geoattrd-state.new && mv /run/geoattrd-state.new /run/geoattrd/state' ||
        fail "the walk: root could not rename a file over /run/geoattrd/state"
    before=$(ct stat -c '%U:%G %a' /run/geoattrd/state 2>&1 || true)
    doctor=$(walk_doctor)
    row=$(grep -E '^\[(ok  |warn|FAIL)\] state file:' <<<"$doctor" | paste -sd ';' || true)
    if grep -q -E '^\[(warn|FAIL)\] state file:' <<<"$doctor"; then
        pass "the state file replaced by a rename as root ($before): doctor warns: $row"
    else
        fail "the state file replaced by a rename as root ($before): doctor's state file row: '${row:-none}' (a warning expected)"
    fi
    ct systemd-tmpfiles --create geoattrd.conf >/dev/null 2>&1 || true
    after=$(ct stat -c '%U:%G %a' /run/geoattrd/state 2>&1 || true)
    doctor=$(walk_doctor)
    row=$(grep -E '^\[(ok  |warn|FAIL)\] state file:' <<<"$doctor" | paste -sd ';' || true)
    if [ "$after" = "geoattrd:geoattr-state 660" ] && [[ $row == "[ok  ] state file:"* ]] && [[ $row != *";"* ]]; then
        pass "systemd-tmpfiles --create geoattrd.conf: the state file $after, its content kept ($(ct cat /run/geoattrd/state)); doctor: $row"
    else
        fail "after systemd-tmpfiles --create geoattrd.conf: the state file '$after', doctor's row(s) '${row:-none}'"
    fi
    ct sh -c 'echo foreground >/run/geoattrd/state' || true
    wait_state foreground >/dev/null || info "geoattrd did not report foreground again within 10 s"

    # 5d. The index package removed under the running daemon.
    if [ -n "$geodata" ]; then
        ct dpkg -r geoattrd-geodata >/dev/null 2>&1 || fail "dpkg -r geoattrd-geodata failed"
        for _ in $(seq 20); do
            [ -n "$(walk_status index_problem | grep -v '^None$')$(walk_status degraded | grep -v '^\[\]$')" ] && break
            sleep 0.5
        done
        doctor=$(walk_doctor)
        if grep -q 'install geoattrd-geodata' <<<"$doctor"; then
            pass "geoattrd-geodata removed while geoattrd runs: doctor says $(grep -E '^\[(warn|FAIL)\] (index|degraded)' <<<"$doctor" | head -n 1 | head -c 160); $(grep -m 1 'install geoattrd-geodata' <<<"$doctor" | sed 's/^ *//')"
        else
            fail "geoattrd-geodata removed while geoattrd runs: doctor does not say to install geoattrd-geodata:"
            grep -E -A1 '^\[(warn|FAIL)\] (index|degraded)' <<<"$doctor" | indent || true
        fi
    else
        info "the walk without geoattrd-geodata (none built): its removal under the running daemon not tried"
    fi

    # 6. Remove, then purge, with users in geoattrd's groups.
    ct usermod -aG geoattr-metrics prometheus || fail "the walk: usermod -aG geoattr-metrics prometheus failed"
    out=$(ct dpkg -r geoattrd 2>&1) || fail "dpkg -r geoattrd failed: $(tail -c 300 <<<"$out")"
    units=$(ct systemctl list-units --all --no-legend --plain 'geoattrd*' 2>&1 || true)
    for group in geoattr geoattr-state geoattr-metrics; do kept+=("$(ct getent group "$group" || echo "$group: gone")"); done
    if [ -z "$(awk '$3 == "active" { print $1 }' <<<"$units")" ] && ct test -f /etc/geoattrd/geoattrd.yaml &&
        [[ ${kept[0]} == geoattr:*walker* ]] && [[ ${kept[1]} == geoattr-state:* ]] && [[ ${kept[2]} == geoattr-metrics:*prometheus* ]]; then
        pass "dpkg -r geoattrd: no geoattrd unit active, /etc/geoattrd kept, the groups kept with their members ($(printf '%s\n' "${kept[@]}" | cut -d: -f1,4 | paste -sd ' '))"
    else
        fail "dpkg -r geoattrd: units '$(awk '{ print $1, $3 }' <<<"$units" | paste -sd ';')', /etc/geoattrd/geoattrd.yaml $(ct test -f /etc/geoattrd/geoattrd.yaml && echo kept || echo gone), groups: ${kept[*]}"
    fi
    out=$(ct dpkg -P geoattrd 2>&1) || fail "dpkg -P geoattrd failed: $(tail -c 300 <<<"$out")"
    for path in /etc/geoattrd /var/lib/geoattrd /run/geoattrd; do ct test -e "$path" && left+=("$path"); done
    for group in geoattrd geoattrd-gpsd geoattr geoattr-state geoattr-metrics; do ct getent group "$group" >/dev/null && left+=("group $group"); done
    if [ ${#left[@]} -eq 0 ]; then
        pass "dpkg -P geoattrd: /etc/geoattrd, /var/lib/geoattrd, /run/geoattrd and the groups gone"
    else
        fail "dpkg -P geoattrd left ${left[*]}"
    fi
    printed=$(grep '^geoattrd: purge removes group' <<<"$out" || true)
    if grep -q -x 'geoattrd: purge removes group geoattr and with it the membership of walker; a reinstall does not restore them' <<<"$printed" &&
        grep -q -x 'geoattrd: purge removes group geoattr-metrics and with it the membership of prometheus; a reinstall does not restore them' <<<"$printed" &&
        [ "$(grep -c . <<<"$printed")" = 2 ]; then
        pass "the purge said which memberships it drops, for the groups that had members: $(paste -sd '|' <<<"$printed" | sed 's/|/ | /g')"
    else
        fail "the purge's lines on dropped memberships (one each for geoattr: walker, geoattr-metrics: prometheus):"
        indent <<<"${printed:-(none)}"
    fi
    # systemd forgets the units (the postrm's daemon-reload): none is left, not-found or loaded
    # from a file that is gone.
    units=$(ct systemctl list-units --all --no-legend --plain 'geoattrd*' 2>&1 || true)
    if [ -z "$units" ]; then
        pass "after the purge systemctl list-units --all 'geoattrd*' lists no unit (none not-found)"
    else
        fail "after the purge systemctl list-units --all 'geoattrd*' still lists $(awk '{ print $1 " (" $2 ", " $3 ")" }' <<<"$units" | paste -sd ' ')"
    fi
    info "the operator's walk took $((SECONDS - started)) s"
}

section_18() {
    local walk_failures=$failures
    operator_walk
    if [ "$failures" -gt "$walk_failures" ]; then
        echo "--- for the failures of section 18: geoattrd's journal in its container"
        ct journalctl -q --no-pager -o short-monotonic -u geoattrd.socket -u geoattrd.service 2>&1 | tail -n 60 | indent || true
    fi
}

# walk_guard_after_upgrade FROM: gpsd's guard, enabled before the upgrade from FROM, runs this
# release's watcher after it (a main process), and a flushed ruleset has its table back within 2 s.
walk_guard_after_upgrade() {
    local pid back=
    pid=$(ct systemctl show -p MainPID --value geoattrd-gpsd-guard.service 2>/dev/null || echo 0)
    ct nft flush ruleset || true
    for _ in $(seq 20); do
        if ct nft list table inet geoattrd_gpsd_guard >/dev/null 2>&1; then back=yes; break; fi
        sleep 0.1
    done
    if [ "$(ct systemctl is-active geoattrd-gpsd-guard.service || true)" = active ] && [ "${pid:-0}" != 0 ] && [ -n "$back" ]; then
        pass "gpsd's guard, enabled on $from, after the upgrade: active with its watcher (pid $pid), the table back within 2 s of nft flush ruleset"
    else
        fail "gpsd's guard after the upgrade from $from: $(ct systemctl is-active geoattrd-gpsd-guard.service || true), watcher pid '${pid:-none}', table back after a flush: ${back:-no}"
        ct journalctl -q -o cat --no-pager -u geoattrd-gpsd-guard.service | tail -n 10 | indent || true
    fi
}
