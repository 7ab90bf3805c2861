#!/usr/bin/env python3
"""docs/openapi.yaml against the real daemon: schemathesis generates requests from the document
and checks every answer against it (status codes, headers, content types, bodies, 405's Allow,
negative data rejected). Undocumented statuses and shapes fail.

    python conformance.py DAEMON [--max-examples N]

Starts DAEMON (geoattrd) with a static location in a temporary directory, relays a loopback TCP
port to its Unix socket (schemathesis speaks TCP), and runs `st run` on every operation but
/v1/watch, whose stream never ends by design: it is checked here directly, bounded to its start.
"""
from __future__ import annotations

import argparse
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

ROOT = Path(__file__).resolve().parents[2]


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


def watch_start(port: int) -> str:
    """The first bytes of /v1/watch: the head, retry: and the first event."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
        connection.sendall(b"GET /v1/watch HTTP/1.1\r\nhost: geoattrd\r\n\r\n")
        received = b""
        deadline = time.monotonic() + 10
        while b"event: attributes" not in received or not received.endswith(b"\n\n\r\n"):
            if time.monotonic() > deadline:
                break
            chunk = connection.recv(65536)
            if not chunk:
                break
            received += chunk
        return received.decode("utf-8", "replace")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("daemon")
    parser.add_argument("--max-examples", type=int, default=100)
    args = parser.parse_args()

    directory = Path(tempfile.mkdtemp(prefix="geoattrd-api-"))
    config = directory / "geoattrd.yaml"
    config.write_text("gpsd:\n  enabled: false\nstatic:\n  latitude: 47.3769\n  longitude: 8.5417\n"
                      "refresh:\n  burst: 3\n  interval_s: 600\n")
    sock = str(directory / "api.sock")
    env = {k: v for k, v in os.environ.items() if not k.startswith("GEOATTRD_")}
    log = open(directory / "geoattrd.log", "wb")
    daemon = subprocess.Popen(
        [args.daemon, "--config", str(config), "--state-dir", str(directory), "--state-file", str(directory / "state"),
         "--socket", sock, "--index", str(directory / "none.gidx")],
        stdout=log, stderr=subprocess.STDOUT, env=env)
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    port = listener.getsockname()[1]
    threading.Thread(target=relay, args=(listener, sock), daemon=True).start()
    status = 1
    try:
        deadline = time.monotonic() + 15
        while not os.path.exists(sock) and time.monotonic() < deadline:
            time.sleep(0.05)
        start = watch_start(port)
        if not (start.startswith("HTTP/1.1 200 OK\r\ncontent-type: text/event-stream")
                and "retry: 1000\n\n" in start and "event: attributes\ndata: {" in start):
            print(f"conformance: /v1/watch did not start as documented:\n{start}", file=sys.stderr)
            return 1
        command = [
            str(Path(sys.executable).parent / "st"), "run", str(ROOT / "docs/openapi.yaml"),
            "--url", f"http://127.0.0.1:{port}", "--checks", "all", "--exclude-path", "/v1/watch",
            "--max-examples", str(args.max_examples), "--workers", "1", "--request-timeout", "30",
            "--phases", "examples,coverage,fuzzing", "--seed", "1", "--no-color",
        ]
        print("conformance: " + " ".join(command), flush=True)
        # In the scratch directory: schemathesis keeps a cache of what it found in its working directory.
        status = subprocess.call(command, cwd=directory)
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
