# shellcheck shell=bash
# Section 20 of scripts/systemd-test.sh (sourced by it): the package's units under the container's
# own systemd-analyze (Debian 13: systemd 257), as check-units.sh checks them under the host's:
#   - `systemd-analyze verify` of the nine units as installed, of a boot with gpsd's guard
#     enabled beside gpsd.socket (no ordering cycle), and of the Collector recipe's restart pair
#     and drop-ins (examples/collector, from the package): no output at all (verify exits 0 on a
#     misspelled option). --man=no: the tree has no man(1); check-units.sh finds each
#     Documentation=man: page;
#   - `systemd-analyze security --offline=yes` of each service scores it no worse than the host's
#     systemd-analyze (Debian 12: 252) scores the same file; where it is worse, the ✗ lines the
#     container's adds are named.
# It needs nothing of the other sections.

section_20() {
    local units=(geoattrd.service geoattrd.socket geoattrd-gpsd.socket geoattrd-gpsd.service geoattrd-metrics.socket
        geoattrd-metrics-proxy.socket geoattrd-metrics-proxy.service geoattrd-gpsd-guard.service geoattrd-metrics-guard.service)
    local pkg=$run/pkg dir ours theirs output unit report_ours report_theirs score_ours score_theirs added
    local worse=() scores=()
    ours=$(ct systemctl --version | sed -n '1s/^systemd \([0-9]*\).*/\1/p')
    theirs=$(systemd-analyze --version | sed -n '1s/^systemd \([0-9]*\).*/\1/p')
    rm -rf "$pkg"
    dpkg-deb -x "$deb" "$pkg"
    dir=$(dirname "$(ct dpkg -L geoattrd | grep -m 1 '/systemd/system/geoattrd\.service$')")
    output=$(ct sh -c 'cd "$1" && shift && systemd-analyze verify --man=no "$@"' sh "$dir" "${units[@]}" 2>&1 || true)
    if [ -z "$output" ]; then
        pass "systemd-analyze verify (systemd $ours): the nine units in $dir, clean"
    else
        fail "systemd-analyze verify (systemd $ours) of the units in $dir complained:"
        indent <<<"$output"
    fi
    # The boot with gpsd's guard enabled, and the Collector recipe's units, as check-units.sh has them.
    mkdir -p "$root/root/units/examples/otelcol-contrib.service.d" "$root/root/units/examples/my-exporter.service.d"
    printf '[Unit]\nDescription=boot with the guard enabled\nWants=geoattrd-gpsd-guard.service gpsd.socket sockets.target basic.target sysinit.target\n' \
        >"$root/root/units/guard-boot.target"
    cp "$pkg"/usr/share/doc/geoattrd/examples/collector/geoattrd-env-restart@.{path,service} "$root/root/units/examples/"
    cp "$pkg/usr/share/doc/geoattrd/examples/collector/otelcol-contrib.service.d/geoattrd.conf" "$root/root/units/examples/otelcol-contrib.service.d/"
    cp "$pkg/usr/share/doc/geoattrd/examples/collector/my-exporter.service.d/geoattrd.conf" "$root/root/units/examples/my-exporter.service.d/"
    printf '[Service]\nExecStart=/bin/true\n' >"$root/root/units/examples/otelcol-contrib.service"
    printf '[Service]\nExecStart=/bin/true\n' >"$root/root/units/examples/my-exporter.service"
    output=$(ct sh -c 'cd /root/units && systemd-analyze verify --man=no guard-boot.target 2>&1
        cd examples && systemd-analyze verify --man=no geoattrd-env-restart@otelcol-contrib.service.path \
            geoattrd-env-restart@otelcol-contrib.service.service otelcol-contrib.service my-exporter.service 2>&1' || true)
    if [ -z "$output" ]; then
        pass "systemd-analyze verify (systemd $ours): a boot with geoattrd-gpsd-guard.service and gpsd.socket has no ordering cycle; examples/collector's restart pair and drop-ins are clean"
    else
        fail "systemd-analyze verify (systemd $ours) of the guard's boot or examples/collector complained:"
        indent <<<"$output"
    fi
    for unit in geoattrd.service geoattrd-gpsd.service geoattrd-metrics-proxy.service geoattrd-gpsd-guard.service; do
        report_ours=$(ct systemd-analyze security --offline=yes "$dir/$unit" 2>&1 || true)
        report_theirs=$(systemd-analyze security --offline=yes "$pkg$dir/$unit" 2>&1 || true)
        score_ours=$(sed -n "s/.*Overall exposure level for $unit: \([0-9.]*\).*/\1/p" <<<"$report_ours")
        score_theirs=$(sed -n "s/.*Overall exposure level for $unit: \([0-9.]*\).*/\1/p" <<<"$report_theirs")
        if [ -z "$score_ours" ] || [ -z "$score_theirs" ]; then
            fail "systemd-analyze security $unit: no score (systemd $ours: '${score_ours}', host's $theirs: '${score_theirs}'):"
            indent <<<"$report_ours"
            continue
        fi
        scores+=("$unit $score_ours (host's: $score_theirs)")
        # The findings, without the column widths that differ between versions.
        added=$(comm -13 <(grep '✗' <<<"$report_theirs" | awk '{ print $2 }' | sort -u) <(grep '✗' <<<"$report_ours" | awk '{ print $2 }' | sort -u) | paste -sd ' ')
        if awk -v a="$score_ours" -v b="$score_theirs" 'BEGIN { exit !(a > b) }'; then
            worse+=("$unit $score_ours > $score_theirs${added:+ (systemd $ours adds ✗ $added)}")
        elif [ -n "$added" ]; then
            info "systemd-analyze security $unit: systemd $ours marks ✗ what $theirs does not: $added (the score not higher)"
        fi
    done
    if [ ${#worse[@]} -eq 0 ] && [ ${#scores[@]} -eq 4 ]; then
        pass "systemd-analyze security --offline=yes, systemd $ours against the host's $theirs: no service scores worse: $(IFS=';'; echo "${scores[*]}" | sed 's/;/; /g')"
    elif [ ${#worse[@]} -gt 0 ]; then
        fail "systemd-analyze security --offline=yes scores worse under systemd $ours than under the host's $theirs: $(IFS=';'; echo "${worse[*]}" | sed 's/;/; /g')"
    fi
}
