# shellcheck shell=bash
# Section 10 of scripts/systemd-test.sh (sourced by it):
#  10. the Collector recipe (examples/collector/): its restart pair, geoattrd-env-restart@.path and
#      @.service, for a stand-in consumer with the recipe's drop-in: the consumer starts before
#      geoattrd's env file exists (EnvironmentFile=-), is restarted when geoattrd writes the file
#      and when a reload changes what it carries, sees its own attributes joined with geoattrd's,
#      and is not restarted when a fix rewrites the same content; and what the recipe rests on: a
#      unit with EnvironmentFile= and no "-" fails while the file is absent, and a variable from
#      the file replaces the same one from Environment= (4 to 5 s of the run).

# Its restart pair, geoattrd-env-restart@.path and @.service, for a stand-in consumer: my-exporter
# with the recipe's drop-in (EnvironmentFile=-, its own attributes joined with geoattrd's), a
# program that records each start and the OTEL_RESOURCE_ATTRIBUTES it was given. The consumer
# starts before the env file exists; geoattrd then writes the file (outputs.env_file set, a
# restart, a fix), a reload changes what it carries (outputs.level locality/2), and a forced fix
# rewrites the same content.
# starts_reach N: up to 15 s for my-exporter's Nth start; prints the count it got to.
starts_reach() {
    local n=0
    for _ in $(seq 75); do
        n=$(ct cat /run/my-exporter/starts 2>/dev/null || true)
        case $n in '' | *[!0-9]*) n=0 ;; esac
        [ "$n" -ge "$1" ] && break
        sleep 0.2
    done
    echo "$n"
}
# restarter_idle: up to 15 s for the restart service to have no run under way.
restarter_idle() {
    for _ in $(seq 75); do
        case $(ct systemctl show -p ActiveState --value "$restarter") in activating | deactivating) sleep 0.2 ;; *) return 0 ;; esac
    done
}
# env_geo: what the env file carries, without the quotes.
env_geo() { ct sed -n 's/^OTEL_RESOURCE_ATTRIBUTES="\(.*\)"$/\1/p' "$envfile" 2>/dev/null || true; }

section_10() {
    recipe_started=$SECONDS
    units=$root/etc/systemd/system
    mkdir -p "$units/my-exporter.service.d"
    cp examples/collector/geoattrd-env-restart@.path examples/collector/geoattrd-env-restart@.service "$units/"
    cp examples/collector/my-exporter.service.d/geoattrd.conf "$units/my-exporter.service.d/"
    cat >"$units/my-exporter.service" <<'EOF'
[Unit]
Description=systemd-test: a stand-in for a service with an OpenTelemetry SDK
[Service]
ExecStart=/usr/local/bin/my-exporter
RuntimeDirectory=my-exporter
RuntimeDirectoryPreserve=yes
EOF
    cat >"$root/usr/local/bin/my-exporter" <<'EOF'
#!/bin/sh
# Each start: the OTEL_RESOURCE_ATTRIBUTES it was given, then the start count.
set -eu
n=$(($(cat /run/my-exporter/starts 2>/dev/null || echo 0) + 1))
printf '%s\n' "${OTEL_RESOURCE_ATTRIBUTES-(unset)}" >/run/my-exporter/attributes
printf '%s\n' "$n" >/run/my-exporter/starts
exec sleep infinity
EOF
    chmod 0755 "$root/usr/local/bin/my-exporter"
    own=$(sed -n 's/^Environment=SERVICE_RESOURCE_ATTRIBUTES=//p' examples/collector/my-exporter.service.d/geoattrd.conf)
    envfile=/run/geoattrd/geo.env
    restarter=geoattrd-env-restart@my-exporter.service.service
    ct systemctl daemon-reload
    ct rm -f "$envfile"

    # a. Before the env file exists.
    ct systemctl start my-exporter.service || true
    starts=$(starts_reach 1)
    attributes=$(ct cat /run/my-exporter/attributes 2>/dev/null || true)
    # The control: the same without the "-".
    if ct systemd-run --quiet --collect --wait -p EnvironmentFile="$envfile" /bin/true >/dev/null 2>&1; then control=started; else control=refused; fi
    if [ "$(ct systemctl is-active my-exporter.service || true)" = active ] && [ "$starts" = 1 ] && [ "$attributes" = "$own" ] &&
        [ "$control" = refused ]; then
        pass "before $envfile exists, my-exporter (EnvironmentFile=-$envfile) starts with its own attributes alone: $attributes; a unit with EnvironmentFile=$envfile (no '-') fails to start"
    else
        fail "before $envfile exists: my-exporter $(ct systemctl is-active my-exporter.service || true), start $starts, OTEL_RESOURCE_ATTRIBUTES '$attributes' (expected '$own'); the control without '-': $control"
    fi

    # b. geoattrd writes the file: the consumer is restarted and sees geoattrd's attributes after
    # its own.
    ct systemctl enable --now geoattrd-env-restart@my-exporter.service.path 2>/dev/null || true
    config=$root/etc/geoattrd/geoattrd.yaml
    # At exact, the coordinates: what the reload below changes. (log: has a level: too.)
    sed -i -e 's|^  env_file: ""$|  env_file: /run/geoattrd/geo.env|' -e '/^outputs:$/,/^[a-z]/s|^  level: [a-z]*$|  level: exact|' "$config"
    [ "$(grep -c -E '^  (env_file: /run/geoattrd/geo.env|level: exact)$' "$config")" = 2 ] ||
        fail "the package's geoattrd.yaml has no lines '  env_file: \"\"' and '  level: ...' to set outputs.env_file and outputs.level exact in"
    ct systemctl restart geoattrd.service || true
    ct timeout 60 geoattrctl refresh --wait 30 >/dev/null 2>&1 || true
    for _ in $(seq 50); do ct test -f "$envfile" && break; sleep 0.2; done
    geo=$(env_geo)
    starts=$(starts_reach 2)
    restarter_idle
    starts=$(ct cat /run/my-exporter/starts 2>/dev/null || echo 0)
    attributes=$(ct cat /run/my-exporter/attributes 2>/dev/null || true)
    if [[ $geo == *geo.location.lat=* ]] && [ "$starts" = 2 ] && [ "$attributes" = "$own,$geo" ]; then
        pass "geoattrd wrote $envfile; geoattrd-env-restart@my-exporter.service.path restarted my-exporter once (start 2), which sees its own attributes and then geoattrd's: $attributes"
    else
        fail "after geoattrd wrote $envfile ('$geo'): my-exporter start $starts (expected 2), OTEL_RESOURCE_ATTRIBUTES '$attributes' (expected '$own,$geo')"
    fi
    # What the drop-in works around: a variable from EnvironmentFile= replaces the same one from
    # Environment=.
    both=$(ct systemd-run --quiet --collect --wait --pipe -p Environment=OTEL_RESOURCE_ATTRIBUTES="$own" -p EnvironmentFile=-"$envfile" \
        /usr/bin/printenv OTEL_RESOURCE_ATTRIBUTES 2>&1 || true)
    if [ -n "$geo" ] && [ "$both" = "$geo" ]; then
        pass "a unit with Environment=OTEL_RESOURCE_ATTRIBUTES=... and EnvironmentFile=-$envfile gets the file's value alone (hence the drop-in's SERVICE_RESOURCE_ATTRIBUTES)"
    else
        fail "a unit with Environment=OTEL_RESOURCE_ATTRIBUTES=$own and EnvironmentFile=-$envfile got '$both', expected the file's '$geo'"
    fi

    # c. A reload that changes what the file carries: the consumer is restarted again.
    sed -i -e 's|^  level: exact$|  level: locality|' -e 's|^  # decimals: 2$|  decimals: 2|' "$config"
    [ "$(grep -c -E '^  (level: locality|decimals: 2)$' "$config")" = 2 ] ||
        fail "the package's geoattrd.yaml has no lines '  level: exact' and '  # decimals: 2' to set outputs.level locality/2 in"
    ct systemctl reload geoattrd.service || true
    geo2=$geo
    for _ in $(seq 50); do
        geo2=$(env_geo)
        [ "$geo2" != "$geo" ] && break
        sleep 0.2
    done
    starts=$(starts_reach 3)
    restarter_idle
    starts=$(ct cat /run/my-exporter/starts 2>/dev/null || echo 0)
    attributes=$(ct cat /run/my-exporter/attributes 2>/dev/null || true)
    if [[ $geo2 == *geo.location.lat=47.38,* ]] && [ "$starts" = 3 ] && [ "$attributes" = "$own,$geo2" ]; then
        pass "systemctl reload geoattrd at outputs.level locality/2 rewrote $envfile ($geo2): my-exporter restarted (start 3) and sees $attributes"
    else
        fail "after the reload to locality/2: $envfile '$geo2', my-exporter start $starts (expected 3), OTEL_RESOURCE_ATTRIBUTES '$attributes' (expected '$own,$geo2')"
    fi

    # d. The same content rewritten (a forced fix at the same place): the restart service runs,
    # restarts nothing.
    invocation=$(ct systemctl show -p InvocationID --value "$restarter")
    ct timeout 60 geoattrctl refresh --wait 30 >/dev/null 2>&1 || true
    for _ in $(seq 50); do
        [ "$(ct systemctl show -p InvocationID --value "$restarter")" != "$invocation" ] && break
        sleep 0.2
    done
    restarter_idle
    ran=$(ct systemctl show -p InvocationID --value "$restarter")
    result=$(ct systemctl show -p Result --value "$restarter")
    starts=$(ct cat /run/my-exporter/starts 2>/dev/null || echo 0)
    if [ "$ran" != "$invocation" ] && [ "$result" = success ] && [ "$starts" = 3 ] && [ "$(env_geo)" = "$geo2" ]; then
        pass "a forced fix rewrote $envfile with the same attributes: $restarter ran (Result=$result) and restarted nothing (still start 3)"
    else
        fail "after a forced fix at the same place: $restarter $([ "$ran" != "$invocation" ] && echo ran || echo "did not run"), Result=$result; my-exporter start $starts (expected 3)"
    fi
    info "the Collector recipe's checks took $((SECONDS - recipe_started)) s"
}
