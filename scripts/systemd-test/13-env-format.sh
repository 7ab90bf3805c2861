# shellcheck shell=bash
# Section 13 of scripts/systemd-test.sh (sourced by it):
#  13. the env format under EnvironmentFile=: the escaping corpus (shell specials, combining marks,
#      controls, NUL, bytes that are not UTF-8), rendered by geoattrd's env encoder through the
#      escaping-corpus tool (swift build --product escaping-corpus, or ESCAPING_CORPUS=PATH), is
#      loaded by one transient unit and dumped by env -0: every variable holds exactly the value
#      an environment carries (docs/clients.md: control characters removed, noncharacters U+FFFD).

# One unit reads every value: the escaping corpus's env file (geoattrd's encoder, variables
# T_V0 ...) as EnvironmentFile=, its environment dumped NUL-separated by env -0 and compared, on
# the host, byte for byte with the values the corpus says an environment carries.
section_13() {
    local corpus=$run/escaping tool=${ESCAPING_CORPUS:-} count differ
    if [ -z "$tool" ]; then
        if ! swift build --product escaping-corpus >"$run/escaping-build.log" 2>&1; then
            fail "the env format under EnvironmentFile=: swift build --product escaping-corpus failed:"
            tail -n 20 "$run/escaping-build.log" | indent
            return
        fi
        tool=$(swift build --show-bin-path)/escaping-corpus
    fi
    if ! "$tool" "$corpus" 400 >"$run/escaping.log" 2>&1; then
        fail "the env format under EnvironmentFile=: $tool failed: $(cat "$run/escaping.log")"
        return
    fi
    cp "$corpus/geo.env" "$root/root/escaping.env"
    ct systemd-run --quiet --collect --wait --pipe -p EnvironmentFile=/root/escaping.env /usr/bin/env -0 >"$corpus/dumped" 2>"$corpus/dump.err" || true
    LC_ALL=C grep -a -z '^T_V[0-9]*=' "$corpus/dumped" | LC_ALL=C sort -z >"$corpus/got" || true
    LC_ALL=C sort -z "$corpus/env.expected" >"$corpus/expected"
    count=$(tr -cd '\0' <"$corpus/expected" | wc -c)
    if [ "$count" -gt 400 ] && cmp -s "$corpus/expected" "$corpus/got"; then
        pass "EnvironmentFile= under systemd $(ct systemctl --version | sed -n '1s/^systemd \([0-9]*\).*/\1/p'): all $count values of the escaping corpus in geoattrd's env format read back exactly"
    else
        differ=$(LC_ALL=C comm -z -3 "$corpus/expected" "$corpus/got" | tr -cd '\0' | wc -c)
        fail "EnvironmentFile=: of $count values, $differ entries differ (expected, then as systemd read them; the first 6):"
        LC_ALL=C comm -z -3 "$corpus/expected" "$corpus/got" | head -z -n 6 | tr '\0' '\n' | cat -v | indent
        if [ -s "$corpus/dump.err" ]; then indent <"$corpus/dump.err"; fi
        ct journalctl -q -b --no-pager -o cat | grep -F /root/escaping.env | tail -n 3 | indent || true
    fi
}
