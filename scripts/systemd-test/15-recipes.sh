# shellcheck shell=bash
# Section 15 of scripts/systemd-test.sh (sourced by it):
#  15. the recipes as the documents write them, each from the package's geoattrd.yaml (the
#      outputs: lines and commands read from the documents at each run): docs/operating.md's
#      node_exporter textfile recipe (node_exporter bound to loopback) and examples/collector's
#      step 1 (the env file). After each, a user in none of geoattrd's groups and a client whose
#      access rule is none (access.rules uid:UID=none) try the env file, the textfile,
#      node_exporter's http://127.0.0.1:9100/metrics and the API: nothing finer than the recipe's
#      outputs.level reaches either (no coordinates below exact, no postal code below postal, no
#      locality below locality, no region below region), and the API gives the second no geo.*
#      attribute at all.
# It creates outsider and ruled, whom sections 16 and 17 use.

# Each recipe from the package's geoattrd.yaml, its outputs: lines and commands taken from the
# documents themselves: docs/operating.md's node_exporter textfile recipe, then
# examples/collector/README.md's step 1 (the env file). After each, a user in none of geoattrd's
# groups (outsider) and a client whose access rule is none (ruled, group geoattr) try every way to
# the location: the env file, the textfile, node_exporter's port on loopback, the API.
# finer_than LEVEL TEXT: what TEXT (an env file, a textfile, a scrape, geoattrctl's JSON) shows
# beyond LEVEL, as words; nothing when it shows nothing more.
finer_than() {
    local rank=0 shown=()
    case $1 in country) rank=1 ;; region) rank=2 ;; locality) rank=3 ;; postal) rank=4 ;; exact) rank=5 ;; esac
    if [ "$rank" -lt 5 ] && grep -q -i -E 'geo[._]location[._](lat|lon)|geoattrd_location_(latitude|longitude)_degrees' <<<"$2"; then shown+=(coordinates); fi
    if [ "$rank" -lt 4 ] && grep -q -i -E 'geo[._]postal[._]code' <<<"$2"; then shown+=("postal code"); fi
    if [ "$rank" -lt 3 ] && grep -q -i -E 'geo[._]locality[._]name' <<<"$2"; then shown+=(locality); fi
    if [ "$rank" -lt 2 ] && grep -q -i -E 'geo[._]region[._]iso[._]code' <<<"$2"; then shown+=(region); fi
    if [ "$rank" -lt 1 ] && grep -q -i -E 'geo[._](country[._]iso[._]code|continent[._]code)' <<<"$2"; then shown+=(country); fi
    echo "${shown[*]}"
}
# reader_checks RECIPE LEVEL USER...: what each USER reads of the location, against LEVEL.
reader_checks() {
    local recipe=$1 level=$2 user file got text seen finer summary=() problems=() envfile textfile api scrape
    shift 2
    envfile=$(ct geoattrd --config /etc/geoattrd/geoattrd.yaml --check-config | sed -n 's/^outputs\.env_file = //p' || true)
    textfile=$(ct geoattrd --config /etc/geoattrd/geoattrd.yaml --check-config | sed -n 's/^outputs\.prometheus_file = //p' || true)
    for user in "$@"; do
        text= seen=()
        for file in $envfile $textfile; do
            if got=$(ct_as "$user" cat "$file" 2>/dev/null); then text+=$got$'\n' seen+=("$file read"); else seen+=("$file refused"); fi
        done
        scrape=$(container_http_as "$user" GET http://127.0.0.1:9100/metrics || true)
        case ${scrape%%$'\t'*} in
        200) text+=$(grep '^geoattrd_' <<<"${scrape#*$'\t'}" || true)$'\n' seen+=(":9100 $(grep -c '^geoattrd_location' <<<"${scrape#*$'\t'}" || true) geoattrd_location lines") ;;
        *) seen+=(":9100 ${scrape:0:60}") ;;
        esac
        if api=$(ct_as "$user" timeout 20 geoattrctl get 2>&1); then
            text+=$api$'\n' seen+=("the API $(grep -o -E '"geo\.[a-z_.]*"' <<<"$api" | sort -u | paste -sd ',' || true)")
            if [ "$user" = ruled ] && [ -n "$(finer_than none "$api")" ]; then problems+=("ruled (none) got from the API: $(finer_than none "$api")"); fi
        else
            seen+=("the API refused")
        fi
        finer=$(finer_than "$level" "$text")
        [ -z "$finer" ] || problems+=("$user read $finer, finer than $level")
        summary+=("$user: $(IFS=';'; echo "${seen[*]}" | sed 's/;/, /g')")
    done
    if [ ${#problems[@]} -eq 0 ]; then
        pass "$recipe at outputs.level $level: nothing finer reaches $(IFS=';'; echo "${summary[*]}" | sed 's/;/; /g')"
    else
        fail "$recipe at outputs.level $level: $(IFS=';'; echo "${problems[*]}" | sed 's/;/; /g'); what each got: $(IFS=';'; echo "${summary[*]}" | sed 's/;/; /g')"
    fi
}

section_15() {
    local started=$SECONDS config=$root/etc/geoattrd/geoattrd.yaml yaml listen commands set level ruled_uid got
    ct useradd --no-create-home --shell /usr/sbin/nologin outsider
    ct useradd --no-create-home --shell /usr/sbin/nologin --groups geoattr ruled
    ruled_uid=$(ct id -u ruled)
    # The package's geoattrd.yaml as shipped: the installed one is a conffile the sections before
    # this one edited.
    dpkg-deb --fsys-tarfile "$deb" | tar -xO ./etc/geoattrd/geoattrd.yaml >"$run/geoattrd.yaml.dist"
    # a. docs/operating.md: node_exporter's textfile collector.
    cp "$run/geoattrd.yaml.dist" "$config"
    yaml_set "$config" access "rules: [\"uid:$ruled_uid=none\"]" >/dev/null || fail "the package's geoattrd.yaml has no access.rules"
    yaml=$(recipe_block docs/operating.md "**The location through node_exporter's textfile collector.**" yaml)
    listen=$(recipe_block docs/operating.md "**The location through node_exporter's textfile collector.**" sh 1)
    commands=$(recipe_block docs/operating.md "Then, for Debian's \`prometheus-node-exporter\`" sh)
    if ! set=$(yaml_set "$config" outputs "$yaml" 2>&1) || [[ $listen != ARGS=* ]] || [ -z "$commands" ]; then
        fail "docs/operating.md's textfile recipe: no outputs: block to apply ($set), ARGS line ('$listen') or commands"
    else
        sed -i '/^ARGS=/d' "$root/etc/default/prometheus-node-exporter"
        printf '%s\n' "$listen" >>"$root/etc/default/prometheus-node-exporter"
        # The link from section 12 goes: the recipe makes it.
        ct rm -f /var/lib/prometheus/node-exporter/geoattrd.prom
        ct sh -ec "$commands" >"$run/recipe.log" 2>&1 || { fail "the textfile recipe's commands failed:"; indent <"$run/recipe.log"; }
        ct timeout 60 geoattrctl refresh --wait 30 >/dev/null 2>&1 || true
        for _ in $(seq 50); do [ -n "$(ct ss -Hltn 'sport = :9100' || true)" ] && break; sleep 0.2; done
        level=$(ct geoattrd --config /etc/geoattrd/geoattrd.yaml --check-config | sed -n 's/^outputs\.level = //p' || true)
        got=$(container_http GET http://127.0.0.1:9100/metrics)
        info "the textfile recipe: $(paste -sd ',' <<<"$set" | sed 's/,/, /g'); $listen; node_exporter listens on $(ct ss -Hltn 'sport = :9100' | awk '{ print $4 }' | paste -sd ' ' || true); root's scrape has $(grep -c '^geoattrd_location' <<<"$got" || true) geoattrd_location lines"
        reader_checks "the textfile recipe (docs/operating.md)" "${level:-?}" outsider ruled
    fi
    # b. examples/collector/README.md, step 1: the env file, for the Collector's group.
    cp "$run/geoattrd.yaml.dist" "$config"
    yaml_set "$config" access "rules: [\"uid:$ruled_uid=none\"]" >/dev/null || true
    yaml=$(recipe_block examples/collector/README.md "**geoattrd writes the env file.**" yaml)
    commands=$(recipe_block examples/collector/README.md "**geoattrd writes the env file.**" sh)
    if ! set=$(yaml_set "$config" outputs "$yaml" 2>&1) || [ -z "$commands" ]; then
        fail "examples/collector/README.md's step 1: no outputs: lines to apply ($set) or commands"
    else
        # What the otelcol-contrib package would have made: its group.
        ct groupadd --system otelcol-contrib 2>/dev/null || true
        ct sh -ec "$commands" >"$run/recipe.log" 2>&1 || { fail "step 1's commands failed:"; indent <"$run/recipe.log"; }
        ct timeout 60 geoattrctl refresh --wait 30 >/dev/null 2>&1 || true
        level=$(ct geoattrd --config /etc/geoattrd/geoattrd.yaml --check-config | sed -n 's/^outputs\.level = //p' || true)
        envfile=$(ct geoattrd --config /etc/geoattrd/geoattrd.yaml --check-config | sed -n 's/^outputs\.env_file = //p' || true)
        for _ in $(seq 50); do ct test -f "$envfile" && break; sleep 0.2; done
        info "the Collector recipe's step 1: $(paste -sd ',' <<<"$set" | sed 's/,/, /g'); $envfile is $(ct stat -c '%U:%G %a' "$envfile" 2>&1 || true)"
        reader_checks "the Collector recipe's env file (examples/collector)" "${level:-?}" outsider ruled
    fi
    info "the recipes' checks took $((SECONDS - started)) s"
}
