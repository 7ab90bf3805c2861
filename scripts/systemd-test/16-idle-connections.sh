# shellcheck shell=bash
# Section 16 of scripts/systemd-test.sh (sourced by it):
#  16. scraping while a local user attacks 127.0.0.1:2948: ruled (named nowhere) keeps 70
#      keep-alive connections sending GET /metrics every 3 s: the metrics guard
#      (geoattrd-metrics-guard.service, started with the socket) refuses each, and every one of
#      root's 10 scrapes meanwhile gets 200. Then outsider, named in METRICS_GUARD_USERS, holds 512
#      connections (twice the relay's limit), half idle after one answered request, half silent,
#      none opened again once closed; a scraper retrying for up to 30 s gets GET /metrics
#      answered 200 (the metrics socket closes silent and idle connections after 5 s).
# It needs section 11's geoattrd-metrics-proxy.socket and section 15's outsider and ruled.

# outsider holds 512 connections to the relay (twice its limit): the odd ones idle after one
# answered request (a keep-alive), the even ones silent; none is opened again once closed. A
# scraper retrying for up to 30 s must get its 200 meanwhile.
# tally WORD...: each distinct word with its count, "WORD xN, ..."
tally() {
    [ $# -gt 0 ] || return 0
    printf '%s\n' "$@" | sort | uniq -c | awk '{ printf "%s%s x%s", sep, $2, $1; sep = ", " }'
}
section_16() {
    local started=$SECONDS listen port opened held held_first answer took tries=0 refusals=() scraped=
    listen=$(ct systemctl show -p Listen --value geoattrd-metrics-proxy.socket)
    port=${listen#127.0.0.1:}
    port=${port%% *}
    cat >"$root/usr/local/bin/hold-connections" <<'PY'
#!/usr/bin/python3
# hold-connections PORT N STATUS: N connections to 127.0.0.1:PORT, as said above; writes
# "opened held" to STATUS each half second.
import os, selectors, socket, sys
port, count, status = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
selector = selectors.DefaultSelector()
opened = 0
for i in range(count):
    connection = socket.socket()
    try:
        connection.connect(("127.0.0.1", port))
        if i % 2:
            connection.sendall(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    except OSError:
        pass
    opened += 1
    connection.setblocking(False)
    selector.register(connection, selectors.EVENT_READ)
while True:
    for key, _ in selector.select(timeout=0.5):
        try:
            data = key.fileobj.recv(65536)
        except OSError:
            data = b""
        if not data:
            selector.unregister(key.fileobj)
            key.fileobj.close()
    with open(status + ".new", "w") as out:
        out.write(f"{opened} {len(selector.get_map())}\n")
    os.replace(status + ".new", status)
PY
    chmod 0755 "$root/usr/local/bin/hold-connections"
    # A control first: the relay and geoattrd answer.
    answer=$(container_http GET "http://127.0.0.1:$port/metrics")
    if [ "${answer%%$'\t'*}" != 200 ]; then
        fail "scraping under idle connections: http://127.0.0.1:$port/metrics answers '${answer:0:100}' before any is held"
        return
    fi
    scrapes_under_attack "$port"
    # outsider named: the guard lets it in, and the idle-connection limits are what remain.
    printf 'METRICS_GUARD_USERS="outsider"\n' >"$root/etc/default/geoattrd-metrics-guard"
    ct systemctl reload geoattrd-metrics-guard.service || fail "systemctl reload geoattrd-metrics-guard.service failed"
    ct rm -f /tmp/held
    if ! ct systemd-run --quiet --collect --unit=systemd-test-hold -p User=outsider -p LimitNOFILE=2048 \
        /usr/local/bin/hold-connections "$port" 512 /tmp/held; then
        fail "scraping under idle connections: the holder (systemd-run as outsider) did not start"
        return
    fi
    for _ in $(seq 100); do
        read -r opened held < <(ct cat /tmp/held 2>/dev/null || echo "0 0")
        [ "$opened" = 512 ] && break
        sleep 0.1
    done
    held_first=$held took=$SECONDS
    while [ $((SECONDS - took)) -lt 30 ]; do
        tries=$((tries + 1))
        answer=$(ct timeout 10 python3 -c '
import sys, urllib.error, urllib.request
try:
    with urllib.request.urlopen(sys.argv[1], timeout=5) as answer:
        print(answer.status)
except urllib.error.HTTPError as error:
    print(error.code)
except Exception as error:
    print(type(error).__name__)' "http://127.0.0.1:$port/metrics" 2>&1 || echo timeout)
        if [ "$answer" = 200 ]; then
            scraped=$((SECONDS - took))
            break
        fi
        refusals+=("$answer")
        sleep 0.5
    done
    read -r opened held < <(ct cat /tmp/held 2>/dev/null || echo "0 0")
    ct systemctl stop systemd-test-hold 2>/dev/null || true
    if [ -n "$scraped" ]; then
        pass "while outsider held idle connections to 127.0.0.1:$port ($opened opened, half idle after a request, half silent, none opened again; $held_first still open when the scraping began, $held at its 200): GET /metrics answered 200 after ${scraped} s, at try $tries${refusals[*]:+ (before it: $(tally "${refusals[@]}"))}"
    else
        fail "while outsider held idle connections to 127.0.0.1:$port ($opened opened; $held_first still open when the scraping began, $held after it): no 200 in 30 s of $tries tries: $(tally "${refusals[@]}")"
        ct journalctl -q -o cat --no-pager -u geoattrd-metrics-proxy.service | sort | uniq -c | sort -rn | head -n 5 | indent || true
    fi
    rm -f "$root/etc/default/geoattrd-metrics-guard"
    ct systemctl reload geoattrd-metrics-guard.service || true
    info "the relay refused $(ct journalctl -q -o cat --no-pager -u geoattrd-metrics-proxy.service | grep -c 'Hit connection limit' || true) connection(s) at its limit; the idle-connection checks took $((SECONDS - started)) s"
}

# scrapes_under_attack PORT: ruled, named nowhere, opens 70 connections to 127.0.0.1:PORT and sends
# GET /metrics on each every 3 s (a keep-alive), opening again any that closes; meanwhile root
# scrapes 10 times, a second apart. Every scrape must get 200, and the guard must have refused
# every one of ruled's connections.
scrapes_under_attack() {
    local port=$1 statuses=() answer tally_line
    cat >"$root/usr/local/bin/metrics-attack" <<'PY'
#!/usr/bin/python3
# metrics-attack PORT COUNT SECONDS: COUNT keep-alive connections sending GET /metrics every 3 s;
# prints "connected N refused M answered K" at the end.
import socket, sys, time
port, count, seconds = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
request = b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
connections = [None] * count
connected = refused = answered = 0
deadline = time.monotonic() + seconds
while time.monotonic() < deadline:
    for i in range(count):
        try:
            if connections[i] is None:
                connections[i] = socket.create_connection(("127.0.0.1", port), timeout=1)
                connected += 1
            connections[i].sendall(request)
            if connections[i].recv(65536):
                answered += 1
        except OSError:
            refused += 1
            if connections[i] is not None:
                connections[i].close()
            connections[i] = None
    time.sleep(3)
print(f"connected {connected} refused {refused} answered {answered}")
PY
    chmod 0755 "$root/usr/local/bin/metrics-attack"
    ct rm -f /tmp/attack.out
    ct systemd-run --quiet --collect --unit=systemd-test-attack -p User=ruled -p StandardOutput=file:/tmp/attack.out \
        /usr/local/bin/metrics-attack "$port" 70 14 || { fail "the attacker (systemd-run as ruled) did not start"; return; }
    sleep 2
    for _ in $(seq 10); do
        answer=$(container_http GET "http://127.0.0.1:$port/metrics")
        statuses+=("${answer%%$'\t'*}")
        sleep 1
    done
    for _ in $(seq 40); do
        ct test -s /tmp/attack.out && break
        sleep 0.5
    done
    tally_line=$(ct cat /tmp/attack.out 2>/dev/null || echo "no report")
    ct systemctl stop systemd-test-attack 2>/dev/null || true
    if [ "$(tally "${statuses[@]}")" = "200 x10" ] && [[ $tally_line == "connected 0 refused "* ]] && [[ $tally_line != *" refused 0 "* ]]; then
        pass "while ruled (named nowhere) kept 70 keep-alive connections to 127.0.0.1:$port asking GET /metrics every 3 s, root's 10 scrapes got 200 x10; the metrics guard refused all of ruled's ($tally_line)"
    else
        fail "under ruled's 70 keep-alive connections: root's scrapes $(tally "${statuses[@]}"); ruled: $tally_line"
        ct nft list ruleset 2>&1 | indent || true
    fi
}
