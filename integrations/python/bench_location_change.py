#!/usr/bin/env python3
"""How soon a new location reaches spans through GeoAttrdSpanProcessor.

    python bench_location_change.py [--moves 40] [--daemon PATH]

Starts geoattrd (PATH, else $GEOATTRD_TEST_DAEMON, else the debug build) with a static location
and no gpsd in a temporary directory, and a TracerProvider with the span processor following it.
Then moves the daemon MOVES times between two places (a new configuration, SIGHUP, and a forced
fix whose answer says the daemon serves the new place) and, after each move, starts a span every
millisecond until one carries the new place. Prints the latency from the daemon's answer to that
span: median, 95th percentile and maximum (target: within 1 s at the 95th percentile).
"""

from __future__ import annotations

import argparse
import http.client
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from opentelemetry.sdk.trace import TracerProvider

from geoattrd_opentelemetry import GeoAttrdAttributeSource, GeoAttrdSpanProcessor

PLACES = [(47.3769, 8.5417), (48.8566, 2.3522)]
ROOT = Path(__file__).resolve().parents[2]


class UnixConnection(http.client.HTTPConnection):
    def __init__(self, path: str):
        super().__init__("geoattrd", timeout=10)
        self.path = path

    def connect(self) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(self.path)


def call(path: str, method: str, target: str) -> int:
    connection = UnixConnection(path)
    try:
        connection.request(method, target)
        response = connection.getresponse()
        response.read()
        return response.status
    finally:
        connection.close()


def write_config(config: Path, latitude: float, longitude: float) -> None:
    text = (
        "gpsd:\n  enabled: false\n"
        f"static:\n  latitude: {latitude}\n  longitude: {longitude}\n"
        # Every move is a forced fix: enough tokens that none is refused.
        "refresh:\n  burst: 1000\n  interval_s: 1\n"
    )
    temporary = config.with_suffix(".tmp")
    temporary.write_text(text)
    os.replace(temporary, config)


def wait(condition, timeout: float, step: float = 0.01) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(step)
    return False


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--moves", type=int, default=40, help="location changes to time (default 40)")
    parser.add_argument("--daemon", default=os.environ.get("GEOATTRD_TEST_DAEMON") or str(ROOT / ".build/debug/geoattrd"))
    args = parser.parse_args()

    directory = Path(tempfile.mkdtemp(prefix="geoattrd-bench-"))
    config, sock, log = directory / "geoattrd.yaml", str(directory / "api.sock"), directory / "geoattrd.log"
    write_config(config, *PLACES[0])
    env = {k: v for k, v in os.environ.items() if not k.startswith("GEOATTRD_")}
    with open(log, "wb") as output:
        daemon = subprocess.Popen(
            [args.daemon, "--config", str(config), "--state-dir", str(directory), "--state-file", str(directory / "state"),
             "--socket", sock, "--index", str(directory / "none.gidx")],
            stdout=output, stderr=subprocess.STDOUT, env=env)
    try:
        if not wait(lambda: os.path.exists(sock) and call(sock, "GET", "/v1/attributes") == 200, 15):
            sys.exit(f"geoattrd did not serve within 15 s:\n{log.read_text(errors='replace')[-2000:]}")
        source = GeoAttrdAttributeSource(sock)
        provider = TracerProvider(shutdown_on_exit=False)
        provider.add_span_processor(GeoAttrdSpanProcessor(source=source))
        tracer = provider.get_tracer("bench")
        if not source.wait_for_document(5):
            sys.exit("the span processor saw no attributes within 5 s")

        latencies = []
        for move in range(1, args.moves + 1):
            latitude, longitude = PLACES[move % 2]
            reloads = log.read_text(errors="replace").count("configuration reloaded")
            write_config(config, latitude, longitude)
            daemon.send_signal(signal.SIGHUP)
            if not wait(lambda: log.read_text(errors="replace").count("configuration reloaded") > reloads, 10):
                sys.exit("geoattrd did not reload")
            if call(sock, "POST", "/v1/refresh?wait=5") != 200:
                sys.exit("the forced fix failed")
            served = time.monotonic()
            while True:
                span = tracer.start_span("op")
                span.end()
                if span.attributes.get("geo.location.lat") == latitude:
                    latencies.append(time.monotonic() - served)
                    break
                if time.monotonic() - served > 10:
                    sys.exit(f"move {move}: spans never carried the new place")
                time.sleep(0.001)
        provider.shutdown()
        source.shutdown()
    finally:
        daemon.send_signal(signal.SIGTERM)
        daemon.wait(15)
        shutil.rmtree(directory, ignore_errors=True)

    ordered = sorted(latencies)
    p95 = ordered[max(0, round(0.95 * len(ordered)) - 1)]
    print(f"{len(latencies)} location changes: from the daemon serving the new place to the first span carrying it")
    print(f"median {statistics.median(ordered) * 1000:.1f} ms, p95 {p95 * 1000:.1f} ms, max {ordered[-1] * 1000:.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
