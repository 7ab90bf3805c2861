#!/usr/bin/env python3
"""docs/openapi.yaml against the real daemon: schemathesis generates requests from the document
and checks every answer against it (status codes, headers, content types, bodies, 405's Allow,
negative data rejected, /v1/watch's events). Undocumented statuses and shapes fail.

    python conformance.py DAEMON [--max-examples N]

Starts DAEMON (geoattrd) in a temporary directory with a static location in Kraków and an index
of that one place, built here with geoattrctl (DAEMON's sibling, else from PATH), so a name
that is not ASCII crosses the API. Relays a loopback TCP port to the daemon's Unix socket
(schemathesis speaks TCP) and runs `st run` on every operation. /v1/watch never ends by design:
schemathesis reads each stream up to its first event. What it cannot provoke is checked here
first, each event against the document's own event schema: the stream's start (content type
with its charset, retry:, the first event, a heartbeat) and, run as root, the reconnect event
that ends a client's stream when a reload changes its grant.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import jsonschema_rs
import yaml

ROOT = Path(__file__).resolve().parents[2]
DOCUMENT = ROOT / "docs/openapi.yaml"
LOCALITY = "Kraków"
LATITUDE, LONGITUDE = 50.0614, 19.9366
HEARTBEAT_S = 1
# Any uid but root's and the daemon's (both always see everything): one whose grant a reload can change.
CLIENT_UID = 65534


def relay(listener: socket.socket, target: str) -> None:
    """Accepts TCP connections and pipes each, both ways, to the Unix socket `target`."""
    def pipe(source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for end in (source, sink):
                try:
                    end.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    while True:
        try:
            client, _ = listener.accept()
        except OSError:
            return
        upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            upstream.connect(target)
        except OSError:
            client.close()
            continue
        threading.Thread(target=pipe, args=(client, upstream), daemon=True).start()
        threading.Thread(target=pipe, args=(upstream, client), daemon=True).start()


def build_index(directory: Path, daemon: str) -> Path | None:
    """An index of Kraków alone (a square of Poland around it), or None without geoattrctl."""
    sibling = Path(daemon).resolve().parent / "geoattrctl"
    geoattrctl = str(sibling) if os.access(sibling, os.X_OK) else shutil.which("geoattrctl")
    if geoattrctl is None:
        return None
    sources = directory / "geodata"
    sources.mkdir()
    square = [[19, 49.5], [21, 49.5], [21, 50.5], [19, 50.5], [19, 49.5]]
    (sources / "countries.geojson").write_text(json.dumps({"type": "FeatureCollection", "features": [{
        "type": "Feature", "properties": {"country": "PL", "zone": "Europe/Warsaw"},
        "geometry": {"type": "MultiPolygon", "coordinates": [[square]]}}]}))
    (sources / "cities.txt").write_text("\t".join(["3094802", LOCALITY, "Krakow", "", str(LATITUDE), str(LONGITUDE),
                                                   "P", "PPLA", "PL"] + [""] * 5 + ["804237"] + [""] * 4) + "\n",
                                        encoding="utf-8")
    (sources / "continents.tsv").write_text("PL\tEU\n")
    index = directory / "krakow.gidx"
    subprocess.run([geoattrctl, "index", "build", "--out", str(index), "--data", str(sources)],
                   check=True, stdout=subprocess.DEVNULL)
    return index


class EventSchema:
    """The document's schema of one /v1/watch event, with contentMediaType application/json and
    its contentSchema asserted as schemathesis asserts them (JSON Schema keeps them annotations)."""

    def __init__(self, document: dict) -> None:
        components = document["components"]

        class ContentMediaType:
            def __init__(self, parent_schema: dict, value: str, _path: list) -> None:
                content = parent_schema.get("contentSchema")
                self.validator = (jsonschema_rs.Draft202012Validator({**content, "components": components})
                                  if value == "application/json" and content is not None else None)

            def validate(self, instance: object) -> None:
                if self.validator is not None and isinstance(instance, str):
                    self.validator.validate(json.loads(instance))

        def validator(schema: dict) -> jsonschema_rs.Validator:
            return jsonschema_rs.Draft202012Validator({**schema, "components": components},
                                                      keywords={"contentMediaType": ContentMediaType})

        content = document["paths"]["/v1/watch"]["get"]["responses"]["200"]["content"]
        schema = content[next(name for name in content if name.split(";")[0].strip() == "text/event-stream")]["schema"]
        self.validator = validator(schema)
        # A oneOf only says that no branch fits; the branch the event's type names says why.
        target = schema
        while "$ref" in target:
            target = components["schemas"][target["$ref"].removeprefix("#/components/schemas/")]
        mapping = target.get("discriminator", {}).get("mapping", {})
        self.by_type = {event: validator({"$ref": reference}) for event, reference in mapping.items()}

    def violations(self, event: dict) -> list[str]:
        errors = list(self.validator.iter_errors(event))
        if errors and event.get("event") in self.by_type:
            errors = list(self.by_type[event["event"]].iter_errors(event)) or errors
        return [f"{error.message[:500]} (at /{'/'.join(map(str, error.instance_path))})" for error in errors]


class Watch:
    """GET /v1/watch on a connected socket: the head, then the chunked body block by block
    (the lines up to a blank line), decoded as the content type's charset says."""

    def __init__(self, connection: socket.socket, timeout: float = 5) -> None:
        self.connection = connection
        connection.settimeout(timeout)
        connection.sendall(b"GET /v1/watch HTTP/1.1\r\nhost: geoattrd\r\n\r\n")
        self.received = b""
        self.body = b""
        self.ended = False
        self.last_id: str | None = None
        status, *lines = self._until(b"\r\n\r\n").decode("latin-1").split("\r\n")
        self.status = status
        self.headers = {name.strip().lower(): value.strip() for name, _, value in (line.partition(":") for line in lines)}
        media_type, *parameters = self.headers.get("content-type", "").split(";")
        self.media_type = media_type.strip().lower()
        self.charset = next((value.strip().strip('"').lower() for name, _, value in (p.partition("=") for p in parameters)
                             if name.strip().lower() == "charset"), None)

    def _fill(self) -> None:
        chunk = self.connection.recv(65536)
        if not chunk:
            raise EOFError("the connection closed before the stream's end")
        self.received += chunk

    def _until(self, marker: bytes) -> bytes:
        while marker not in self.received:
            self._fill()
        data, _, self.received = self.received.partition(marker)
        return data

    def block(self) -> str | None:
        """The next block; None once the chunked body has ended."""
        while b"\n\n" not in self.body:
            if self.ended:
                return None
            size = int(self._until(b"\r\n").split(b";")[0], 16)
            while len(self.received) < size + 2:
                self._fill()
            self.body += self.received[:size]
            self.received = self.received[size + 2:]
            self.ended = size == 0
        block, _, self.body = self.body.partition(b"\n\n")
        # As clients that keep RFC 2616's default read it: text/* without a charset is ISO-8859-1.
        return block.decode(self.charset or "iso-8859-1")

    def event(self, block: str) -> dict | None:
        """The block as an SSE parser delivers it (schemathesis's shape: event, data, the last
        id seen); None for a block without data (a comment, retry:)."""
        kind = None
        data = []
        for line in block.split("\n"):
            if line.startswith(":"):
                continue
            name, _, value = line.partition(":")
            value = value.removeprefix(" ")
            if name == "data":
                data.append(value)
            elif name == "id":
                self.last_id = value
            elif name == "event":
                kind = value
        if not data:
            return None
        event = {"event": kind or "message", "data": "\n".join(data)}
        if self.last_id is not None:
            event["id"] = self.last_id
        return event


def payload(event: dict) -> dict:
    """An event's data as JSON, or {} (the schema check says what is wrong with it)."""
    try:
        data = json.loads(event["data"])
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def check_start(watch: Watch, schema: EventSchema, locality: bool) -> list[str]:
    """The stream's first blocks, as the document describes them; what differs."""
    problems = []
    if watch.status != "HTTP/1.1 200 OK":
        return [f"answered {watch.status!r}"]
    if watch.media_type != "text/event-stream" or watch.charset != "utf-8":
        problems.append(f"content-type is {watch.headers.get('content-type')!r}, not text/event-stream; charset=utf-8")
    first = watch.block()
    if first != "retry: 1000":
        problems.append(f"opened with {first!r}, not 'retry: 1000'")
    block = watch.block()
    event = watch.event(block or "")
    if event is None or event["event"] != "attributes":
        return problems + [f"the first event is {block!r}, not attributes"]
    problems += [f"the first event: {problem}" for problem in schema.violations(event)]
    name = payload(event).get("attributes", {}).get("geo.locality.name")
    if locality and name != LOCALITY:
        problems.append(f"geo.locality.name reads {name!r}, not {LOCALITY!r} "
                        f"(decoded as {watch.charset or 'ISO-8859-1, the content type naming no charset'})")
    try:
        heartbeat = watch.block()
    except TimeoutError:
        heartbeat = None
    if heartbeat != ": heartbeat":
        problems.append(f"after the first event came {heartbeat!r}, not ': heartbeat' (api.heartbeat_s: {HEARTBEAT_S})")
    return problems


def connect_as(uid: int, path: str) -> socket.socket:
    """A connection to `path` made by a child running as `uid` (and its group): the daemon grants
    by the peer credentials the kernel takes at connect, and the socket is handed back here.
    Forked, not run: no interpreter this one could start is sure to be open to that uid. Called
    before any thread starts."""
    here, there = socket.socketpair()
    with here:
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                os.setgroups([])
                os.setgid(uid)
                os.setuid(uid)
                with socket.socket(socket.AF_UNIX) as connection:
                    connection.connect(path)
                    socket.send_fds(there, [b"."], [connection.fileno()])
                code = 0
            finally:
                os._exit(code)
        there.close()
        _, status = os.waitpid(pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            raise RuntimeError(f"a child running as uid {uid} could not connect to {path}")
        _, (descriptor,), _, _ = socket.recv_fds(here, 1, 1)
    return socket.socket(fileno=descriptor)


def check_reconnect(path: str, config: Path, daemon: subprocess.Popen, schema: EventSchema) -> list[str]:
    """A reload that lowers a watching client's grant: its stream ends with a valid reconnect
    event, and the client, connecting again, is served at its new level."""
    problems = []
    with connect_as(CLIENT_UID, path) as connection:
        watch = Watch(connection)
        blocks = [watch.block(), watch.block()]
        if watch.event(blocks[-1] or "") is None:
            return [f"a uid {CLIENT_UID} client's stream opened with {blocks!r}"]
        config.write_text(config.read_text() + f'access:\n  rules: ["uid:{CLIENT_UID}=country"]\n')
        daemon.send_signal(signal.SIGHUP)
        events = []
        # Heartbeats keep a stream that does not end alive: bound the wait as a whole.
        deadline = time.monotonic() + 10
        try:
            while (block := watch.block()) is not None:
                if (event := watch.event(block)) is not None:
                    events.append(event)
                if time.monotonic() > deadline:
                    raise TimeoutError("still open 10 s after the reload")
        except (TimeoutError, EOFError) as error:
            problems.append(f"after the reload, the stream did not end cleanly ({error or 'timed out'})")
        if not events or events[-1]["event"] != "reconnect":
            problems.append(f"after the reload, the stream's last event is {events[-1] if events else None}, not reconnect")
        for event in events:
            problems += [f"the {event['event']} event after the reload: {problem}" for problem in schema.violations(event)]
    with connect_as(CLIENT_UID, path) as connection:
        watch = Watch(connection)
        watch.block()
        event = watch.event(watch.block() or "")
        if event is None or payload(event).get("precision") != "country":
            problems.append(f"connecting again, the uid {CLIENT_UID} client is not served at level country: {event}")
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("daemon")
    parser.add_argument("--max-examples", type=int, default=100)
    args = parser.parse_args()

    directory = Path(tempfile.mkdtemp(prefix="geoattrd-api-"))
    index = build_index(directory, args.daemon)
    if index is None:
        print("conformance: no geoattrctl next to the daemon or on PATH: no index, so no locality checked", flush=True)
    as_root = os.geteuid() == 0
    config = directory / "geoattrd.yaml"
    config.write_text(f"gpsd:\n  enabled: false\nstatic:\n  latitude: {LATITUDE}\n  longitude: {LONGITUDE}\n"
                      f"refresh:\n  burst: 3\n  interval_s: 600\napi:\n  heartbeat_s: {HEARTBEAT_S}\n"
                      # Open to the other uid the reconnect check connects as.
                      + ('socket:\n  mode: "0666"\n' if as_root else ""))
    if as_root:
        directory.chmod(0o711)
    sock = str(directory / "api.sock")
    env = {k: v for k, v in os.environ.items() if not k.startswith("GEOATTRD_")}
    # The daemon says READY=1 (sd_notify) once its socket is bound: the event awaited below.
    notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    notify.bind(str(directory / "notify.sock"))
    env["NOTIFY_SOCKET"] = str(directory / "notify.sock")
    log = open(directory / "geoattrd.log", "wb")
    daemon = subprocess.Popen(
        [args.daemon, "--config", str(config), "--state-dir", str(directory), "--state-file", str(directory / "state"),
         "--socket", sock, "--index", str(index or directory / "none.gidx")],
        stdout=log, stderr=subprocess.STDOUT, env=env)
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    problems: list[str] = []
    status = 1
    try:
        notify.settimeout(15)
        try:
            while b"READY=1" not in notify.recv(4096):
                pass
        except TimeoutError:
            pass  # the connect below says what went wrong
        finally:
            notify.close()
        schema = EventSchema(yaml.safe_load(DOCUMENT.read_text(encoding="utf-8")))
        with socket.socket(socket.AF_UNIX) as connection:
            connection.connect(sock)
            problems += [f"/v1/watch's start: {problem}" for problem in check_start(Watch(connection), schema, index is not None)]
        if as_root:
            problems += [f"/v1/watch's reconnect: {problem}" for problem in check_reconnect(sock, config, daemon, schema)]
        else:
            print("conformance: not root: no client whose grant a reload can change, so no reconnect event checked", flush=True)
        for problem in problems:
            print(f"conformance: {problem}", file=sys.stderr, flush=True)
        if not problems:
            print("conformance: /v1/watch's start" + (" and reconnect" if as_root else "") + " as documented", flush=True)
        listener.bind(("127.0.0.1", 0))
        listener.listen(64)
        port = listener.getsockname()[1]
        threading.Thread(target=relay, args=(listener, sock), daemon=True).start()
        settings = directory / "schemathesis.toml"
        # A watch stream ends only at shutdown or a grant change: schemathesis reads it up to its
        # first event (the next comes with the next fix, ten minutes off), and gives up on one
        # that sends none (Last-Event-ID at the current generation) in seconds, not 30.
        settings.write_text('[[operations]]\ninclude-path = "/v1/watch"\nmax-stream-events = 1\nrequest-timeout = 5\n')
        command = [
            str(Path(sys.executable).parent / "st"), "--config-file", str(settings), "run", str(DOCUMENT),
            "--url", f"http://127.0.0.1:{port}", "--checks", "all",
            "--max-examples", str(args.max_examples), "--workers", "1", "--request-timeout", "30",
            "--phases", "examples,coverage,fuzzing", "--seed", "1", "--no-color",
        ]
        print("conformance: " + " ".join(command), flush=True)
        # In the scratch directory: schemathesis keeps a cache of what it found in its working directory.
        status = subprocess.call(command, cwd=directory)
        if problems:
            print(f"conformance: {len(problems)} problem(s) with /v1/watch, above", file=sys.stderr)
            status = status or 1
    finally:
        listener.close()
        daemon.send_signal(signal.SIGTERM)
        try:
            daemon.wait(15)
        except subprocess.TimeoutExpired:
            daemon.kill()
        log.close()
        if status != 0:
            print((directory / "geoattrd.log").read_text(errors="replace")[-3000:], file=sys.stderr)
        shutil.rmtree(directory, ignore_errors=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
