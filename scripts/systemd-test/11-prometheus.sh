# shellcheck shell=bash
# Sections 11 and 12 of scripts/systemd-test.sh (sourced by it):
#  11. Prometheus over loopback TCP, as docs/operating.md sets it up: geoattrd-metrics.socket and
#      geoattrd-metrics-proxy.socket enabled and started with geoattrd stopped; from the container's
#      loopback, the first scrape starts geoattrd, which takes the metrics socket from systemd;
#      GET /metrics on the proxy's port answers 200 with geoattrd_ families, and /v1/attributes,
#      /v1/status, /v1/watch, POST /v1/refresh, PUT /v1/state and / are 404; the relay runs as a
#      dynamic user with no network of its own.
#  12. node_exporter's textfile collector, as docs/operating.md sets it up: Debian's
#      prometheus-node-exporter (user prometheus, in group geoattr-metrics, a link from its default
#      directory) serves geoattrd_location_info and geoattrd_location_updated_timestamp_seconds
#      from /run/geoattrd/textfile/geoattrd.prom (geoattrd:geoattr-metrics 0640, in a directory
#      geoattrd:geoattr-metrics 2750); prometheus can read it and write nothing there, a client
#      outside the group cannot read it, and the layout survives a restart.
# Section 12 needs section 8's client1 (the client outside geoattr-metrics).

# As docs/operating.md says: geoattrd-metrics.socket (the metrics socket, passed to geoattrd when
# it starts) and geoattrd-metrics-proxy.socket (127.0.0.1, relayed by systemd-socket-proxyd to the
# metrics socket) enabled and started while geoattrd is stopped; from the container's loopback,
# the first scrape starts geoattrd, /metrics answers and nothing else does.
section_11() {
    local started=$SECONDS got listen port answer status body refused=() pid log relay_pid netns method target payload
    # systemd starts no socket whose service runs: geoattrd stops first, and the first scrape
    # starts it again with both sockets.
    ct systemctl enable geoattrd-metrics.socket geoattrd-metrics-proxy.socket 2>/dev/null || true
    ct systemctl stop geoattrd.service || true
    ct systemctl start geoattrd-metrics.socket geoattrd-metrics-proxy.socket || true
    listen=$(ct systemctl show -p Listen --value geoattrd-metrics-proxy.socket)
    port=${listen#127.0.0.1:}
    port=${port%% *}
    got="$(ct systemctl is-active geoattrd-metrics.socket geoattrd-metrics-proxy.socket geoattrd.service | paste -sd ' ' || true);"
    got+=$(ct stat -c '%U:%G %a %F' /run/geoattrd/metrics.sock 2>&1 || true)
    answer=$(container_http GET "http://127.0.0.1:$port/metrics")
    pid=$(ct systemctl show -p MainPID --value geoattrd.service)
    log=$( [ "${pid:-0}" != 0 ] && ct journalctl -q -o cat --no-pager _PID="$pid" || true)
    if [ "$got" = "active active inactive;geoattrd:geoattrd 666 socket" ] && grep -q 'using the metrics socket passed by systemd' <<<"$log"; then
        pass "geoattrd-metrics.socket and geoattrd-metrics-proxy.socket ($listen) active, /run/geoattrd/metrics.sock geoattrd:geoattrd 0666, geoattrd stopped; the first scrape started geoattrd, which took the metrics socket from systemd"
    else
        fail "the metrics sockets and geoattrd before the first scrape: '$got' (expected active active inactive;geoattrd:geoattrd 666 socket), Listen=$listen; geoattrd's log after it:"
        tail -n 20 <<<"$log" | indent
    fi
    status=${answer%%$'\t'*} body=${answer#*$'\t'}
    if [ "$status" = 200 ] && grep -q '^# HELP geoattrd_fixes_total ' <<<"$body" && grep -q '^geoattrd_build_info{' <<<"$body"; then
        pass "GET http://127.0.0.1:$port/metrics from the container's loopback: 200, $(grep -c '^# TYPE geoattrd_' <<<"$body") geoattrd_ families"
    else
        fail "GET http://127.0.0.1:$port/metrics: status '$status', body: $(head -c 300 <<<"$body")"
    fi
    for request in "GET /v1/attributes" "GET /v1/attributes?format=prometheus" "GET /v1/status" "GET /v1/watch" \
        "POST /v1/refresh" "PUT /v1/state background" "GET /"; do
        read -r method target payload <<<"$request"
        answer=$(container_http "$method" "http://127.0.0.1:$port$target" ${payload:+"$payload"})
        [ "${answer%%$'\t'*}" = 404 ] || refused+=("$method $target: ${answer:0:200}")
    done
    if [ ${#refused[@]} -eq 0 ] && [ "$(daemon_state)" = foreground ]; then
        pass "through 127.0.0.1:$port everything else is 404: /v1/attributes (also ?format=prometheus), /v1/status, /v1/watch, POST /v1/refresh, PUT /v1/state, /; geoattrd still in the foreground"
    else
        fail "through 127.0.0.1:$port: ${refused[*]:-all 404}; geoattrd reports $(daemon_state)"
    fi
    relay_pid=$(ct systemctl show -p MainPID --value geoattrd-metrics-proxy.service)
    netns=$( [ "${relay_pid:-0}" != 0 ] && ct nsenter -t "$relay_pid" -n ip -br addr | awk '{ print $1 }' | paste -sd ' ' || true)
    got="$(ct systemctl show -p ActiveState --value geoattrd-metrics-proxy.service) $(ct systemctl show -p Result --value geoattrd-metrics-proxy.service)"
    got+=" $(ct systemctl show -p DynamicUser --value geoattrd-metrics-proxy.service)"
    if [ "$got" = "active success yes" ] && [ "$netns" = lo ]; then
        pass "geoattrd-metrics-proxy.service: active, Result=success, a dynamic user, its network lo only"
    else
        fail "geoattrd-metrics-proxy.service: ActiveState Result DynamicUser '$got', its network '$netns'"
    fi
    ct systemd-analyze security geoattrd-metrics-proxy.service 2>&1 | sed -n 's/^→ \(Overall exposure level.*\)/\1/p' |
        while read -r line; do info "systemd-analyze security (online): $line"; done || true
    info "the /metrics-over-TCP checks took $((SECONDS - started)) s"
}

# As docs/operating.md says: Debian's prometheus-node-exporter (1.5, user prometheus) joins
# geoattr-metrics and reads /run/geoattrd/textfile/geoattrd.prom through a link in its default
# directory; geoattrd writes the file there (outputs.prometheus_file, outputs.mode 0640). Its
# scrape carries the location; prometheus can read the file but write nothing there; a client
# outside the group cannot read it; the layout holds across a restart.
prometheus_textfile_checks() {
    local started=$SECONDS yaml=$root/etc/geoattrd/geoattrd.yaml textfile=/run/geoattrd/textfile/geoattrd.prom got body log
    local wrote=() expected="geoattrd:geoattr-metrics 2750 directory;geoattrd:geoattr-metrics 640 regular file"
    ct usermod -aG geoattr-metrics prometheus || fail "usermod -aG geoattr-metrics prometheus failed"
    ct ln -sf "$textfile" /var/lib/prometheus/node-exporter/geoattrd.prom || fail "no link in /var/lib/prometheus/node-exporter"
    # The socket's mode is "0660": only the outputs' can be "0640" or "0644".
    sed -i -e "s|^  prometheus_file: \"\"\$|  prometheus_file: $textfile|" -e 's|^  mode: "064[04]"$|  mode: "0640"|' "$yaml"
    [ "$(grep -c -E "^  (prometheus_file: $textfile|mode: \"0640\")\$" "$yaml")" = 2 ] ||
        fail "the package's geoattrd.yaml has no lines '  prometheus_file: \"\"' and '  mode: \"0640\"' (or \"0644\") to set the textfile in"
    ct systemctl restart geoattrd.service || true
    ct timeout 60 geoattrctl refresh --wait 30 >/dev/null 2>&1 || true
    for _ in $(seq 50); do ct test -f "$textfile" && break; sleep 0.2; done
    got=$(ct stat -c '%U:%G %a %F' /run/geoattrd/textfile "$textfile" 2>&1 | paste -sd ';' || true)
    if [ "$got" = "$expected" ]; then
        pass "geoattrd wrote $textfile: /run/geoattrd/textfile geoattrd:geoattr-metrics 2750, the file geoattrd:geoattr-metrics 0640 (the directory's group; geoattrd is not in it)"
    else
        fail "the textfile layout: '$got', expected '$expected'"
    fi
    ct systemctl start prometheus-node-exporter.service || true
    for _ in $(seq 50); do [ -n "$(ct ss -Hltn 'sport = :9100' || true)" ] && break; sleep 0.2; done
    body=$(container_http GET http://127.0.0.1:9100/metrics)
    if [[ ${body%%$'\t'*} == 200 ]] && grep -q '^geoattrd_location_info[{ ]' <<<"$body" &&
        grep -q '^geoattrd_location_updated_timestamp_seconds ' <<<"$body" && grep -q '^node_textfile_scrape_error 0$' <<<"$body"; then
        pass "node_exporter $(ct prometheus-node-exporter --version 2>&1 | sed -n '1s/.*version \([0-9.]*\).*/\1/p') (user prometheus, group geoattr-metrics, the link in /var/lib/prometheus/node-exporter): http://127.0.0.1:9100/metrics carries geoattrd_location_info and geoattrd_location_updated_timestamp_seconds, node_textfile_scrape_error 0"
    else
        fail "node_exporter's http://127.0.0.1:9100/metrics: $(grep -E '^(geoattrd_|node_textfile)' <<<"$body" | head -n 8 | paste -sd ';' || true) (status ${body%%$'\t'*}); its journal:"
        { ct journalctl -q -o cat --no-pager -u prometheus-node-exporter.service || true; } | tail -n 10 | indent
    fi
    ct_as prometheus touch /run/geoattrd/textfile/planted.prom 2>/dev/null && wrote+=("created a file")
    ct_as prometheus sh -c "echo planted >> $textfile" 2>/dev/null && wrote+=("appended to the file")
    ct_as prometheus mv "$textfile" /run/geoattrd/textfile/aside.prom 2>/dev/null && wrote+=("moved the file")
    ct_as prometheus rm -f "$textfile" 2>/dev/null && wrote+=("removed the file")
    if [ ${#wrote[@]} -eq 0 ] && ct_as prometheus grep -q '^geoattrd_location_info' "$textfile" &&
        ! ct_as client1 cat "$textfile" >/dev/null 2>&1 && ! ct_as client1 ls /run/geoattrd/textfile >/dev/null 2>&1; then
        pass "prometheus reads $textfile but cannot create, append, move or remove anything there; client1 (not in geoattr-metrics) can neither read the file nor list the directory"
    else
        fail "prometheus and the textfile: ${wrote[*]:-wrote nothing}; or prometheus could not read it, or client1 could"
    fi
    ct systemctl restart geoattrd.service || true
    ct timeout 60 geoattrctl refresh --wait 30 >/dev/null 2>&1 || true
    got=$(ct stat -c '%U:%G %a %F' /run/geoattrd/textfile "$textfile" 2>&1 | paste -sd ';' || true)
    body=$(container_http GET http://127.0.0.1:9100/metrics)
    log=$(ct journalctl -q -o cat --no-pager -u geoattrd.service || true)
    if [ "$got" = "$expected" ] && grep -q '^geoattrd_location_info[{ ]' <<<"$body" && ! grep -q 'output file not written' <<<"$log"; then
        pass "after systemctl restart geoattrd and a fix: the textfile layout is the same (RuntimeDirectory= left it alone) and node_exporter still carries the location; no 'output file not written'"
    else
        fail "after the restart: the textfile layout '$got' (expected '$expected'), or node_exporter lost the location, or geoattrd logged 'output file not written'"
    fi
    info "the textfile checks took $((SECONDS - started)) s"
}
section_12() {
    prometheus_textfile_checks
    if [ "$failures" -gt 0 ]; then
        echo "--- for the failures above: the Prometheus units' status and journals"
        ct systemctl status --no-pager --lines=0 geoattrd-metrics.socket geoattrd-metrics-proxy.socket geoattrd-metrics-proxy.service \
            prometheus-node-exporter.service 2>&1 | indent || true
        ct journalctl -q --no-pager -o short-monotonic -u geoattrd-metrics.socket -u geoattrd-metrics-proxy.socket \
            -u geoattrd-metrics-proxy.service -u prometheus-node-exporter.service 2>&1 | tail -n 60 | indent || true
    fi
}
