"""Fixtures: the real geoattrd (started here, from GEOATTRD_TEST_DAEMON), a fake server on a
Unix socket for bad input, a time bound on every test, and a check that no thread is left."""

from __future__ import annotations

import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Callable, Dict, List, Optional, Tuple

import pytest

HERE = Path(__file__).resolve().parent
PACKAGE_ROOT = HERE.parent
REPO_ROOT = PACKAGE_ROOT.parent.parent
DAEMON = os.environ.get("GEOATTRD_TEST_DAEMON") or str(REPO_ROOT / ".build" / "debug" / "geoattrd")
TEST_TIMEOUT_S = int(os.environ.get("GEOATTRD_TEST_TIMEOUT", "60"))
THREAD_NAME = "geoattrd-attributes"

# What the tests pass to GeoAttrdAttributeSource so that reconnects are quick.
FAST = dict(backoff_initial=0.02, backoff_max=0.2, request_timeout=2.0, poll_interval=0.05)


# -- bounds --------------------------------------------------------------------------------


@pytest.fixture(autouse=True)
def _time_bound():
    """Every test ends within TEST_TIMEOUT_S, whatever blocks."""

    def on_alarm(signum, frame):
        raise TimeoutError(f"test took longer than {TEST_TIMEOUT_S} s")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(TEST_TIMEOUT_S)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def geoattrd_threads() -> List[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == THREAD_NAME]


@pytest.fixture(autouse=True)
def _no_thread_left():
    """Each test shuts down what it started: no background thread survives it."""
    yield
    deadline = time.monotonic() + 5
    while geoattrd_threads() and time.monotonic() < deadline:
        time.sleep(0.02)
    left = geoattrd_threads()
    if left:
        from geoattrd_opentelemetry import _source

        for source in list(_source._live_sources):
            source.shutdown(2)
        pytest.fail(f"{len(left)} {THREAD_NAME} thread(s) left behind")


def wait_until(predicate: Callable[[], object], timeout: float, interval: float = 0.01):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            return value
        time.sleep(interval)


# -- a plain HTTP client for the tests (not the package's own) ------------------------------


class _UnixConnection(http.client.HTTPConnection):
    def __init__(self, path: str, timeout: float = 10):
        super().__init__("geoattrd", timeout=timeout)
        self._path = path

    def connect(self):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        sock.connect(self._path)
        self.sock = sock


def http_call(path: str, method: str, target: str, timeout: float = 15) -> Tuple[int, Dict[str, str], bytes]:
    conn = _UnixConnection(path, timeout)
    try:
        conn.request(method, target)
        response = conn.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        conn.close()


# -- the real daemon -----------------------------------------------------------------------


class Daemon:
    """geoattrd in a temporary directory (traversable by other uids), with its own config,
    state directory, state file and socket (mode 0666), and no index."""

    def __init__(
        self,
        workdir: Path,
        *,
        latitude: Optional[float] = 47.3769,
        longitude: Optional[float] = 8.5417,
        gpsd_enabled: bool = False,
        rules: Tuple[str, ...] = (),
        heartbeat_s: Optional[float] = None,
    ):
        self.dir = workdir
        self.socket = str(workdir / "geoattrd.sock")
        self.config = workdir / "geoattrd.yaml"
        self.log_path = workdir / "geoattrd.log"
        self.latitude = latitude
        self.longitude = longitude
        self.gpsd_enabled = gpsd_enabled
        self.rules = rules
        self.heartbeat_s = heartbeat_s
        self.process: Optional[subprocess.Popen] = None
        self._log = None
        self.write_config()

    def write_config(self) -> None:
        lines = []
        if self.gpsd_enabled:
            # Nothing listens there: no fix, ever.
            lines += ["gpsd:", "  enabled: true", '  endpoint: "127.0.0.1:9"']
        else:
            lines += ["gpsd:", "  enabled: false"]
        if self.latitude is not None:
            lines += ["static:", f"  latitude: {self.latitude}", f"  longitude: {self.longitude}", "  error_m: 25"]
        lines += ["socket:", '  mode: "0666"']
        if self.heartbeat_s is not None:
            lines += ["api:", f"  heartbeat_s: {self.heartbeat_s}"]
        if self.rules:
            lines += ["access:", "  rules: [" + ", ".join(json.dumps(r) for r in self.rules) + "]"]
        tmp = self.config.with_suffix(".tmp")
        tmp.write_text("\n".join(lines) + "\n")
        os.replace(tmp, self.config)

    def start(self, wait: bool = True) -> "Daemon":
        if not os.access(DAEMON, os.X_OK):
            pytest.fail(f"no geoattrd binary at {DAEMON}: build it (swift build) or set GEOATTRD_TEST_DAEMON")
        env = {k: v for k, v in os.environ.items() if not k.startswith("GEOATTRD_")}
        self._log = open(self.log_path, "ab")
        self.process = subprocess.Popen(
            [
                DAEMON,
                "--config", str(self.config),
                "--state-dir", str(self.dir),
                "--state-file", str(self.dir / "state"),
                "--socket", self.socket,
                "--index", str(self.dir / "none.gidx"),
            ],
            stdout=self._log,
            stderr=subprocess.STDOUT,
            env=env,
        )
        if wait:
            self.wait_ready()
        return self

    def wait_ready(self, timeout: float = 15) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                pytest.fail(f"geoattrd exited with {self.process.returncode}:\n{self.log()}")
            try:
                # With a static location and no gpsd, ready means serving it.
                serving = self.latitude is not None and not self.gpsd_enabled
                status, _, _ = http_call(self.socket, "GET", "/v1/attributes" if serving else "/v1/status", timeout=2)
                if status == 200:
                    return
            except OSError:
                pass
            time.sleep(0.02)
        pytest.fail(f"geoattrd did not answer within {timeout} s:\n{self.log()}")

    def stop(self) -> None:
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)
        self.process = None
        if self._log:
            self._log.close()
            self._log = None

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-4000:]
        except OSError:
            return ""

    def attributes(self) -> Tuple[int, dict]:
        status, _, body = http_call(self.socket, "GET", "/v1/attributes?format=json")
        return status, json.loads(body)

    def reload(self) -> None:
        """SIGHUP, and wait until the daemon says it reloaded."""
        before = self.log().count("configuration reloaded")
        self.process.send_signal(signal.SIGHUP)
        if not wait_until(lambda: self.log().count("configuration reloaded") > before, 10):
            pytest.fail(f"geoattrd did not reload:\n{self.log()}")

    def refresh(self) -> dict:
        """POST /v1/refresh?wait=5 (the tests run as root, who may): the new result."""
        status, _, body = http_call(self.socket, "POST", "/v1/refresh?wait=5")
        assert status == 200, (status, body, self.log())
        return json.loads(body)

    def move_to(self, latitude: float, longitude: float) -> dict:
        """A new static location: the config, a reload (which reconfigures the static fix
        source when gpsd is disabled), then a forced fix, which serves it."""
        self.latitude, self.longitude = latitude, longitude
        self.write_config()
        self.reload()
        doc = self.refresh()
        assert doc["attributes"]["geo.location.lat"] == pytest.approx(latitude), (doc, self.log())
        return doc


@pytest.fixture
def workdir():
    path = Path(tempfile.mkdtemp(prefix="geoattrd-otel-"))
    os.chmod(path, 0o755)  # other uids traverse it to reach the socket
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def make_daemon(workdir):
    daemons: List[Daemon] = []

    def make(**kwargs) -> Daemon:
        sub = workdir / f"d{len(daemons)}"
        sub.mkdir()
        os.chmod(sub, 0o755)
        daemon = Daemon(sub, **kwargs)
        daemons.append(daemon)
        return daemon

    yield make
    for daemon in daemons:
        daemon.stop()


@pytest.fixture
def daemon(make_daemon) -> Daemon:
    return make_daemon().start()


# -- a fake server, for what the real daemon never sends -----------------------------------


class FakeConnection:
    def __init__(self, server: "FakeServer", conn: socket.socket, method: str, target: str, headers: Dict[str, str]):
        self.server = server
        self.conn = conn
        self.method = method
        self.target = target
        self.headers = headers

    def send(self, data: bytes) -> None:
        self.conn.sendall(data)

    def respond(self, status: int, body: bytes = b"", headers: Optional[Dict[str, str]] = None) -> None:
        reason = http.client.responses.get(status, "X")
        head = [f"HTTP/1.1 {status} {reason}", f"content-length: {len(body)}"]
        for name, value in (headers or {}).items():
            head.append(f"{name}: {value}")
        self.send(("\r\n".join(head) + "\r\n\r\n").encode() + body)

    def start_stream(self) -> None:
        self.send(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n"
            b"transfer-encoding: chunked\r\n\r\n"
        )

    def chunk(self, data: bytes) -> None:
        self.send(b"%x\r\n%s\r\n" % (len(data), data))

    def event(self, doc, event_id: int = 1) -> None:
        data = doc if isinstance(doc, (bytes, str)) else json.dumps(doc)
        if isinstance(data, str):
            data = data.encode()
        self.chunk(b"id: %d\nevent: attributes\ndata: %s\n\n" % (event_id, data))

    def end_stream(self) -> None:
        self.send(b"0\r\n\r\n")

    def hold(self) -> None:
        """Keeps the connection open until the client closes it or the server stops."""
        self.conn.settimeout(0.05)
        while not self.server.stopping.is_set():
            try:
                if not self.conn.recv(4096):
                    return
            except socket.timeout:
                continue
            except OSError:
                return


Handler = Callable[[FakeConnection], None]


class FakeServer:
    """A server on a Unix socket: the n-th connection is given to handlers[n] (the last one
    for all after). Records every request."""

    def __init__(self, path: str, handlers: List[Handler]):
        self.path = path
        self.handlers = handlers
        self.requests: List[Tuple[str, str, Dict[str, str]]] = []
        self.stopping = threading.Event()
        self._threads: List[threading.Thread] = []
        self._conns: List[socket.socket] = []
        self._lock = threading.Lock()
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._listener.bind(path)
        os.chmod(path, 0o666)
        self._listener.listen(64)
        self._listener.settimeout(0.05)
        self._accept_thread = threading.Thread(target=self._accept, name="fake-geoattrd", daemon=True)
        self._accept_thread.start()

    @property
    def connections(self) -> int:
        with self._lock:
            return len(self.requests)

    def _accept(self) -> None:
        n = 0
        while not self.stopping.is_set():
            try:
                conn, _ = self._listener.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            handler = self.handlers[min(n, len(self.handlers) - 1)]
            n += 1
            thread = threading.Thread(target=self._serve, args=(conn, handler), name="fake-geoattrd-conn", daemon=True)
            with self._lock:
                self._conns.append(conn)
                self._threads.append(thread)
            thread.start()

    def _serve(self, conn: socket.socket, handler: Handler) -> None:
        try:
            conn.settimeout(5)
            data = b""
            while b"\r\n\r\n" not in data:
                piece = conn.recv(4096)
                if not piece:
                    return
                data += piece
            head = data.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")
            method, target, _ = head[0].split(" ", 2)
            headers = {}
            for line in head[1:]:
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
            with self._lock:
                self.requests.append((method, target, headers))
            handler(FakeConnection(self, conn, method, target, headers))
        except OSError:
            pass
        finally:
            try:
                conn.close()
            except OSError:
                pass

    def stop(self) -> None:
        self.stopping.set()
        self._listener.close()
        self._accept_thread.join(5)
        with self._lock:
            conns, threads = list(self._conns), list(self._threads)
        for conn in conns:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        for thread in threads:
            thread.join(5)
        try:
            os.unlink(self.path)
        except OSError:
            pass


@pytest.fixture
def fake_server(workdir):
    servers: List[FakeServer] = []

    def make(*handlers: Handler, name: str = "fake.sock") -> FakeServer:
        server = FakeServer(str(workdir / name), list(handlers))
        servers.append(server)
        return server

    yield make
    for server in servers:
        server.stop()


def document(lat: float = 47.3769, lon: float = 8.5417, generation: int = 1, **extra) -> dict:
    attributes = {"geo.location.lat": lat, "geo.location.lon": lon}
    attributes.update(extra)
    return {"attributes": attributes, "generation": generation, "precision": "exact", "source": "static"}


# -- the SDK -------------------------------------------------------------------------------


class Pipelines:
    """A TracerProvider and a LoggerProvider exporting to memory, with the geoattrd
    processors registered before the exporting ones."""

    def __init__(self, socket_path: Optional[str] = None, source=None):
        import logging

        from opentelemetry.sdk._logs import LoggerProvider, LoggingHandler
        from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

        from geoattrd_opentelemetry import GeoAttrdLogRecordProcessor, GeoAttrdSpanProcessor

        try:
            from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter as LogExporter
        except ImportError:  # before SDK 1.39
            from opentelemetry.sdk._logs.export import InMemoryLogExporter as LogExporter

        self.span_exporter = InMemorySpanExporter()
        self.tracer_provider = TracerProvider()
        self.span_processor = GeoAttrdSpanProcessor(socket_path, source=source)
        self.tracer_provider.add_span_processor(self.span_processor)
        self.tracer_provider.add_span_processor(SimpleSpanProcessor(self.span_exporter))
        self.tracer = self.tracer_provider.get_tracer("geoattrd-tests")

        self.log_exporter = LogExporter()
        self.logger_provider = LoggerProvider()
        self.log_processor = GeoAttrdLogRecordProcessor(socket_path, source=source)
        self.logger_provider.add_log_record_processor(self.log_processor)
        self.logger_provider.add_log_record_processor(SimpleLogRecordProcessor(self.log_exporter))
        self.logger = logging.getLogger(f"geoattrd-tests-{id(self)}")
        self.logger.propagate = False
        self.logger.setLevel(logging.INFO)
        self.handler = LoggingHandler(logger_provider=self.logger_provider)
        self.logger.addHandler(self.handler)

    @property
    def source(self):
        return self.span_processor.source

    def span_attributes(self, name: str = "op", **kwargs) -> dict:
        with self.tracer.start_as_current_span(name, **kwargs):
            pass
        return dict(self.span_exporter.get_finished_spans()[-1].attributes)

    def log_attributes(self, message: str = "hello") -> dict:
        self.logger.warning(message)
        return dict(self.log_exporter.get_finished_logs()[-1].log_record.attributes)

    def shutdown(self) -> None:
        self.logger.removeHandler(self.handler)
        self.tracer_provider.shutdown()
        self.logger_provider.shutdown()


@pytest.fixture
def pipelines():
    made: List[Pipelines] = []

    def make(socket_path: Optional[str] = None, source=None) -> Pipelines:
        p = Pipelines(socket_path, source)
        made.append(p)
        return p

    yield make
    for p in made:
        p.shutdown()


def geo(attributes: dict) -> dict:
    return {k: v for k, v in attributes.items() if k.startswith("geo.")}
