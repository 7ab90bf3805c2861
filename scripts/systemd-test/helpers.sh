# shellcheck shell=bash
# What the sections of scripts/systemd-test.sh share (sourced by it): the PASS/FAIL lines and their
# count, commands as a user of the container, the runtime layout's three checks, the state the
# daemon reports, HTTP from inside the container, geoattrd.yaml's keys set in place, and the
# fenced blocks of the documents whose recipes the sections follow.

failures=0
pass() { printf 'PASS  %s\n' "$*"; }
fail() {
    printf 'FAIL  %s\n' "$*"
    failures=$((failures + 1))
}
info() { printf 'INFO  %s\n' "$*"; }
indent() { sed 's/^/      /'; }
# ct_as USER COMMAND...: a command inside the container as USER, with its groups.
ct_as() {
    local user=$1
    shift
    ct runuser -u "$user" -- "$@"
}
# The runtime layout (tmpfiles.d/geoattrd.conf, geoattrd.socket), as lstat sees it: three lines.
layout_checks() {
    local when=$1 got
    got=$(ct stat -c '%U:%G %a %F' /run/geoattrd 2>&1 || true)
    if [ "$got" = "geoattrd:geoattrd 755 directory" ]; then
        pass "$when: /run/geoattrd is geoattrd:geoattrd 0755"
    else
        fail "$when: /run/geoattrd is '$got', expected geoattrd:geoattrd 755 directory"
    fi
    got=$(ct stat -c '%U:%G %a %F' /run/geoattrd/geoattrd.sock 2>&1 || true)
    if [ "$got" = "geoattrd:geoattr 660 socket" ]; then
        pass "$when: /run/geoattrd/geoattrd.sock is a socket, geoattrd:geoattr 0660"
    else
        fail "$when: /run/geoattrd/geoattrd.sock is '$got', expected geoattrd:geoattr 660 socket"
    fi
    got=$(ct stat -c '%U:%G %a %F' /run/geoattrd/state 2>&1 || true)
    case $got in
    "geoattrd:geoattr-state 660 regular file" | "geoattrd:geoattr-state 660 regular empty file")
        pass "$when: /run/geoattrd/state is a regular file, geoattrd:geoattr-state 0660"
        ;;
    *) fail "$when: /run/geoattrd/state is '$got', expected a regular file geoattrd:geoattr-state 660" ;;
    esac
}
# daemon_state: the state geoattrd reports (geoattrctl status, its state field).
daemon_state() {
    ct timeout 10 geoattrctl status 2>/dev/null | ct python3 -c 'import json, sys; print(json.load(sys.stdin)["state"])' 2>/dev/null || true
}
# wait_state STATE: up to 10 s for geoattrd to report STATE; prints the seconds it took.
wait_state() {
    local started=$SECONDS
    while [ $((SECONDS - started)) -lt 10 ]; do
        [ "$(daemon_state)" = "$1" ] && { echo $((SECONDS - started)); return 0; }
        sleep 0.5
    done
    return 1
}

# container_http_as USER METHOD URL [BODY]: the status, a tab and the body of a request made inside
# the container as USER (python3: the tree has no curl); "error<TAB>why" when there is no answer.
container_http_as() {
    local user=$1
    shift
    ct runuser -u "$user" -- python3 - "$@" <<'PY'
import sys, urllib.error, urllib.request
method, url = sys.argv[1], sys.argv[2]
data = sys.argv[3].encode() if len(sys.argv) > 3 else None
try:
    with urllib.request.urlopen(urllib.request.Request(url, data=data, method=method), timeout=20) as answer:
        status, body = answer.status, answer.read()
except urllib.error.HTTPError as error:
    status, body = error.code, error.read()
except OSError as error:
    print(f"error\t{error}")
    sys.exit(0)
sys.stdout.buffer.write(f"{status}\t".encode() + body)
PY
}
# container_http METHOD URL [BODY]: the same, as root.
container_http() { container_http_as root "$@"; }

# yaml_set CONFIG SECTION LINES: sets in SECTION of CONFIG each "key: value" of LINES (a
# "SECTION:" line, comments and blank lines skipped), over the key's line or its commented-out
# example; prints "key: value" for each, and fails naming a key the section does not have.
yaml_set() {
    python3 - "$@" <<'PY'
import re, sys
path, section, given = sys.argv[1:4]
wanted = []
for line in given.split("\n"):
    line = re.sub(r"\s+#.*$", "", line).rstrip()
    match = re.match(r"^\s*([a-z_]+):\s*(.*)$", line)
    if not match or (match.group(1) == section and not match.group(2)):
        continue
    wanted.append((match.group(1), match.group(2)))
lines = open(path, encoding="utf-8").read().split("\n")
current, done = None, set()
for i, line in enumerate(lines):
    header = re.match(r"^([a-z_]+):\s*$", line)
    if header:
        current = header.group(1)
        continue
    if current != section:
        continue
    for key, value in wanted:
        if key not in done and re.match(rf"^  (# )?{key}:", line):
            lines[i] = f"  {key}: {value}"
            done.add(key)
missing = [key for key, _ in wanted if key not in done]
if missing or not wanted:
    print(f"no {section}: key {' '.join(missing) or '(none given)'} in {path}", file=sys.stderr)
    sys.exit(1)
open(path, "w", encoding="utf-8").write("\n".join(lines))
for key, value in wanted:
    print(f"{key}: {value}")
PY
}

# recipe_block FILE MARKER LANG [N]: the Nth (default first) fenced block of LANG after the first
# line of FILE holding MARKER, unindented; nothing when there is none.
recipe_block() {
    python3 - "$@" <<'PY'
import sys, textwrap
path, marker, lang = sys.argv[1:4]
wanted = int(sys.argv[4]) if len(sys.argv) > 4 else 1
lines = open(path, encoding="utf-8").read().split("\n")
start = next((i for i, line in enumerate(lines) if marker in line), None)
if start is None:
    sys.exit(0)
fence, seen, block = None, 0, []
for line in lines[start + 1:]:
    text = line.strip()
    if fence is None:
        if text.startswith("```"):
            fence = text[3:]
            seen += fence == lang
        continue
    if text == "```":
        if fence == lang and seen == wanted:
            print(textwrap.dedent("\n".join(block)))
            sys.exit(0)
        fence = None
    elif fence == lang and seen == wanted:
        block.append(line)
PY
}
