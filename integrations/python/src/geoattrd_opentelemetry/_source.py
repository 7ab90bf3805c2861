"""The in-memory snapshot of geoattrd's attributes and the one thread that keeps it fresh."""

from __future__ import annotations

import logging
import os
import random
import socket
import threading
import time
import weakref
from types import MappingProxyType
from typing import Dict, Mapping, Optional, Tuple

from ._document import EMPTY, Snapshot, parse_document
from ._http import (
    MAX_BODY_BYTES,
    MAX_EVENT_BYTES,
    Deadline,
    Failure,
    SSEParser,
    WatchUnavailable,
    connect,
    error_code,
    request,
    resolve_socket_path,
    status_failure,
)

_logger = logging.getLogger("geoattrd_opentelemetry")

THREAD_NAME = "geoattrd-attributes"

# A stream that opened (200 text/event-stream) and ended without one usable event this many
# times in a row is treated as unavailable: the thread polls for a while instead.
_BROKEN_STREAMS_BEFORE_POLLING = 3
# The same failure is logged again at most this often (a reminder), however often it repeats.
_RELOG_INTERVAL_S = 600.0


class _Stopping(Exception):
    pass


class _CredentialsChanged(Exception):
    pass


# A forked child's snapshot until its first read, which starts the child's thread. Empty, like
# EMPTY; the readers tell the two apart by identity, and only when there is nothing to stamp.
UNSTARTED = Snapshot({})

Credentials = Tuple[int, int, Tuple[int, ...]]


def _credentials() -> Credentials:
    """What the daemon will see of this process at connect: SO_PEERCRED carries the effective
    uid and gid, SO_PEERGROUPS the supplementary groups."""
    try:
        groups = tuple(sorted(set(os.getgroups())))
    except OSError:
        groups = ()
    return os.geteuid(), os.getegid(), groups


class GeoAttrdAttributeSource:
    """The current ``geo.*`` attributes from geoattrd, kept fresh by one daemon thread.

    The thread follows ``GET /v1/watch`` (Server-Sent Events); when the daemon does not
    offer a usable stream it polls ``GET /v1/attributes`` with ``If-None-Match`` every
    ``poll_interval`` seconds and tries the stream again after ``watch_retry_interval``. It
    reconnects with capped exponential backoff (``backoff_initial`` doubling up to
    ``backoff_max``, a random point in the upper half of each delay). A failure never
    clears the snapshot: it keeps the last good attributes, or stays empty. Each distinct
    failure is logged once (with a reminder at most every 10 minutes while it lasts) on the
    ``geoattrd_opentelemetry`` logger.

    The daemon grants a connection what the process's credentials (effective uid and gid,
    supplementary groups) allowed when it connected. The thread compares them with the
    current ones before each connect, before it applies each answer, and every
    ``credential_check_interval`` seconds while it waits; when they differ it empties the
    snapshot and reconnects. A child process after ``fork()`` keeps nothing of the parent's
    snapshot: its first read starts its own thread.

    Reading :attr:`attributes` does no I/O, takes no lock and never raises (the first read in
    a forked child starts the thread, once).
    """

    def __init__(
        self,
        socket_path: Optional[str] = None,
        *,
        idle_timeout: float = 75.0,
        poll_interval: float = 5.0,
        watch_retry_interval: float = 300.0,
        backoff_initial: float = 0.5,
        backoff_max: float = 30.0,
        request_timeout: float = 5.0,
        max_event_bytes: int = MAX_EVENT_BYTES,
        credential_check_interval: float = 1.0,
        start: bool = True,
    ):
        self.socket_path = resolve_socket_path(socket_path)
        self.idle_timeout = float(idle_timeout)
        self.poll_interval = float(poll_interval)
        self.watch_retry_interval = float(watch_retry_interval)
        self.backoff_initial = float(backoff_initial)
        self.backoff_max = max(float(backoff_max), self.backoff_initial)
        self.request_timeout = float(request_timeout)
        self.max_event_bytes = int(max_event_bytes)
        self.credential_check_interval = max(float(credential_check_interval), 0.01)

        self._snapshot: Snapshot = EMPTY
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._have_document = threading.Event()
        self._thread: Optional[threading.Thread] = None
        self._sock: Optional[socket.socket] = None
        self._refs = 0
        self._etag: Optional[str] = None
        # The credentials of the last connect: those the snapshot was granted to.
        self._creds: Optional[Credentials] = None
        self._logged: Dict[str, float] = {}
        self._failing = False
        self._stream_opened = False
        self._stream_events = 0
        self.mode = "watch"
        _live_sources.add(self)
        if start:
            self.start()

    # -- what the processors read ------------------------------------------------------

    @property
    def attributes(self) -> Mapping[str, object]:
        """The current attributes (read-only; empty while no location is known)."""
        snapshot = self._snapshot
        if snapshot is UNSTARTED:
            self._start_on_read()
        return MappingProxyType(snapshot.attributes)

    @property
    def generation(self) -> Optional[int]:
        """The generation of the daemon's result behind :attr:`attributes`, if any."""
        snapshot = self._snapshot
        if snapshot is UNSTARTED:
            self._start_on_read()
        return snapshot.generation

    @property
    def precision(self) -> Optional[str]:
        """The precision level the daemon granted this client (``exact``, ``country``, ...)."""
        snapshot = self._snapshot
        if snapshot is UNSTARTED:
            self._start_on_read()
        return snapshot.precision

    def wait_for_document(self, timeout: float) -> bool:
        """Blocks until a first document has arrived (for start-up code and tests; the
        processors never call it). True if one has."""
        if self._snapshot is UNSTARTED:
            self._start_on_read()
        return self._have_document.wait(timeout)

    # -- life cycle --------------------------------------------------------------------

    def start(self) -> None:
        """Starts the background thread (idempotent)."""
        with self._lock:
            self._start_locked()

    def _start_locked(self) -> None:
        if self._snapshot is UNSTARTED:
            self._snapshot = EMPTY
        if self._thread is not None and self._thread.is_alive():
            return
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=THREAD_NAME, daemon=True)
        self._thread.start()

    def _start_on_read(self) -> None:
        """The first read in a forked child starts its thread: by then a worker has usually
        switched to the credentials it serves with, which are the ones its connect presents."""
        try:
            with self._lock:
                if self._snapshot is UNSTARTED and not self._stop.is_set():
                    self._start_locked()
        except Exception:  # never into the application
            pass

    def shutdown(self, timeout: float = 5.0) -> bool:
        """Stops the thread, interrupting a blocked read, and joins it. True if it ended."""
        with self._lock:
            self._stop.set()
            if self._snapshot is UNSTARTED:
                self._snapshot = EMPTY
            thread = self._thread
            if self._sock is not None:
                try:
                    self._sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
        if thread is None or thread is threading.current_thread():
            return True
        thread.join(timeout)
        return not thread.is_alive()

    @property
    def running(self) -> bool:
        thread = self._thread
        return thread is not None and thread.is_alive()

    def _retain(self) -> None:
        with _registry_lock:
            self._refs += 1

    def _release(self, timeout: float = 5.0) -> bool:
        with _registry_lock:
            self._refs -= 1
            if self._refs > 0:
                return True
            self._refs = 0
            if _shared.get(self.socket_path) is self:
                del _shared[self.socket_path]
        return self.shutdown(timeout)

    # -- the thread --------------------------------------------------------------------

    def _publish(self, snapshot: Snapshot) -> None:
        self._snapshot = snapshot
        self._have_document.set()
        if self._failing:
            self._failing = False
            self._log_once("recovered", logging.INFO, f"receiving attributes from geoattrd at {self.socket_path} again")

    def _log_once(self, key: str, level: int, message: str) -> None:
        now = time.monotonic()
        last = self._logged.get(key)
        if last is not None and now - last < _RELOG_INTERVAL_S:
            return
        self._logged[key] = now
        _logger.log(level, "%s", message)

    def _note_failure(self, failure: Failure) -> None:
        if self._stop.is_set():
            return
        self._failing = True
        self._log_once(failure.key, logging.WARNING, f"geoattrd attributes: {failure}")

    def _backoff(self, failures: int) -> float:
        delay = min(self.backoff_max, self.backoff_initial * (2 ** min(failures - 1, 30)))
        return random.uniform(delay / 2, delay)

    def _run(self) -> None:
        stop = self._stop
        failures = 0
        broken_streams = 0
        poll_until = 0.0
        while not stop.is_set():
            wait = 0.0
            self._stream_opened = False
            self._stream_events = 0
            try:
                if time.monotonic() < poll_until:
                    self.mode = "poll"
                    self._poll()
                    failures = 0
                    wait = self.poll_interval
                else:
                    self.mode = "watch"
                    got_event = self._follow()
                    # A clean end (the daemon shutting down, or a grant change): reconnect soon.
                    if got_event:
                        failures, broken_streams = 0, 0
                        wait = self._backoff(1)
                    else:
                        raise Failure("empty-stream", "geoattrd's event stream ended without an event")
            except _Stopping:
                break
            except _CredentialsChanged:
                self._log_once(
                    "credentials",
                    logging.INFO,
                    "this process's uid, gid or groups changed: dropped the attributes geoattrd granted "
                    "to the previous ones; reconnecting",
                )
                continue
            except WatchUnavailable as failure:
                self._note_failure(failure)
                poll_until = time.monotonic() + self.watch_retry_interval
                continue
            except Failure as failure:
                self._note_failure(failure)
                if failure.key == "http-403":
                    # Refused now (a reload took this process's access away): what it was granted
                    # before must not stay on its telemetry.
                    with self._lock:
                        self._forget()
                if self._stream_events > 0:
                    # The stream worked for a while: start the backoff afresh.
                    failures, broken_streams = 0, 0
                elif self._stream_opened:
                    broken_streams += 1
                    if broken_streams >= _BROKEN_STREAMS_BEFORE_POLLING:
                        broken_streams = 0
                        self._log_once(
                            "polling",
                            logging.INFO,
                            f"geoattrd's event stream keeps failing; polling /v1/attributes every {self.poll_interval:g} s",
                        )
                        poll_until = time.monotonic() + self.watch_retry_interval
                failures += 1
                wait = self._backoff(failures)
            except Exception as error:  # pragma: no cover - a bug must not end the thread
                self._note_failure(Failure(f"internal-{type(error).__name__}", f"internal error: {error!r}"))
                failures += 1
                wait = self._backoff(failures)
            if wait > 0:
                self._wait(stop, wait)

    def _wait(self, stop: threading.Event, seconds: float) -> None:
        """Waits out a backoff or a poll interval, returning early when the process's
        credentials change (what the snapshot holds is then dropped at once)."""
        deadline = time.monotonic() + seconds
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or stop.wait(min(left, self.credential_check_interval)):
                return
            if self._creds is not None and _credentials() != self._creds:
                self._forget()
                return

    def _forget(self) -> None:
        self._snapshot = EMPTY
        self._have_document.clear()
        self._etag = None

    def _check_credentials(self) -> None:
        """Raises _CredentialsChanged, with the snapshot emptied, when the process's
        credentials are no longer those this connection was granted to."""
        if _credentials() != self._creds:
            self._forget()
            raise _CredentialsChanged()

    def _on_quiet(self, reader) -> bool:
        """A quiet moment on the stream: the credentials are checked, and the stream is given
        up when it has been silent for idle_timeout."""
        self._check_stopping()
        self._check_credentials()
        left = self.idle_timeout - (time.monotonic() - reader.received_at)
        if left <= 0:
            return False
        reader.sock.settimeout(min(self.credential_check_interval, left))
        return True

    def _open(self) -> socket.socket:
        creds = _credentials()
        if creds != self._creds:
            if self._creds is not None:
                self._forget()
            self._creds = creds
        sock = connect(self.socket_path, self.request_timeout)
        # The daemon judged the credentials of the moment of connect(): changed while it ran,
        # they may not be those recorded.
        if _credentials() != creds:
            sock.close()
            self._forget()
            raise _CredentialsChanged()
        with self._lock:
            if self._stop.is_set():
                sock.close()
                raise _Stopping()
            self._sock = sock
        return sock

    def _close(self, sock: socket.socket) -> None:
        # Under the lock, so that shutdown() never acts on a descriptor number reused since.
        with self._lock:
            if self._sock is sock:
                self._sock = None
            sock.close()

    def _check_stopping(self) -> None:
        if self._stop.is_set():
            raise _Stopping()

    def _follow(self) -> bool:
        """Follows /v1/watch until the stream ends. True if it delivered an event."""
        sock = self._open()
        try:
            response = request(
                sock, "GET", "/v1/watch", {"Accept": "text/event-stream"}, Deadline(self.request_timeout)
            )
            if response.status != 200:
                body = response.read_body(MAX_BODY_BYTES)
                self._check_stopping()
                if response.status in (400, 404, 405, 406, 501):
                    raise WatchUnavailable(
                        f"watch-{response.status}",
                        f"geoattrd answered /v1/watch with {response.status}; polling /v1/attributes instead",
                    )
                raise status_failure(response.status, body, "/v1/watch")
            content_type = response.headers.get("content-type", "")
            if not content_type.lower().startswith("text/event-stream"):
                raise WatchUnavailable(
                    "watch-content-type", f"/v1/watch is not an event stream ({content_type!r}); polling instead"
                )
            self._stream_opened = True
            response.reader.deadline = None
            response.reader.on_quiet = self._on_quiet
            response.reader.received_at = time.monotonic()
            sock.settimeout(min(self.credential_check_interval, self.idle_timeout))
            parser = SSEParser(self.max_event_bytes)
            got_event = False
            try:
                for piece in response.body_pieces(16 * 1024):
                    for event_type, data, _event_id in parser.feed(piece):
                        if event_type != "attributes":
                            continue
                        try:
                            snapshot = parse_document(data.encode("utf-8"))
                        except Failure as failure:
                            self._note_failure(failure)
                            continue
                        self._check_credentials()
                        self._etag = None
                        self._publish(snapshot)
                        self._stream_events += 1
                        got_event = True
            except Failure as failure:
                self._check_stopping()
                if failure.key == "timeout":
                    raise Failure(
                        "stream-idle",
                        f"no event or heartbeat from geoattrd for {self.idle_timeout:g} s; reconnecting",
                    ) from None
                if failure.key == "cut" or failure.key.startswith("recv-"):
                    if parser.mid_event:
                        raise Failure(
                            "cut", "geoattrd's event stream was cut mid-event; keeping the last attributes"
                        ) from None
                    raise Failure("stream-lost", "geoattrd's event stream ended abruptly (geoattrd stopped?)") from None
                raise
            self._check_stopping()
            if parser.mid_event:
                raise Failure("cut", "geoattrd's event stream was cut mid-event; keeping the last attributes")
            return got_event
        finally:
            self._close(sock)

    def _poll(self) -> None:
        sock = self._open()
        try:
            headers = {"Connection": "close"}
            if self._etag:
                headers["If-None-Match"] = self._etag
            response = request(sock, "GET", "/v1/attributes?format=json", headers, Deadline(self.request_timeout))
            self._check_credentials()
            if response.status == 304:
                return
            body = response.read_body(MAX_BODY_BYTES)
            self._check_stopping()
            if response.status == 200:
                snapshot = parse_document(body)
                self._publish(snapshot)
                self._etag = response.headers.get("etag")
                return
            if response.status == 503 and error_code(body) == "no_location":
                return  # no location yet: nothing to stamp, nothing wrong
            raise status_failure(response.status, body, "/v1/attributes")
        finally:
            self._close(sock)

    # -- fork --------------------------------------------------------------------------

    def _after_fork_in_child(self) -> None:
        was_running = not self._stop.is_set() and (self._thread is not None or self._snapshot is UNSTARTED)
        # Locks and events another thread may have held at the fork are made anew.
        self._lock = threading.Lock()
        self._have_document = threading.Event()
        self._stop = threading.Event()
        sock, self._sock = self._sock, None
        if sock is not None:
            try:
                sock.close()
            except OSError:
                pass
        self._thread = None
        # The parent's attributes were granted to the parent's credentials, which a prefork
        # worker is about to drop: the child keeps none, and connects no earlier than its
        # first read (the thread checks the credentials again before each answer it applies).
        self._creds = None
        self._etag = None
        self._logged = {}
        self._failing = False
        if was_running:
            self._snapshot = UNSTARTED
        else:
            self._snapshot = EMPTY
            self._stop.set()


_registry_lock = threading.Lock()
_shared: Dict[str, GeoAttrdAttributeSource] = {}
_live_sources: "weakref.WeakSet[GeoAttrdAttributeSource]" = weakref.WeakSet()


def shared_source(socket_path: Optional[str] = None) -> GeoAttrdAttributeSource:
    """The process's source for this socket (one thread per socket path), retained once for
    the caller, who releases it with ``_release()`` (the processors do at shutdown)."""
    path = resolve_socket_path(socket_path)
    with _registry_lock:
        source = _shared.get(path)
        if source is None or source._stop.is_set():
            source = GeoAttrdAttributeSource(path)
            _shared[path] = source
        source._refs += 1
    return source


def _after_fork_in_child() -> None:
    global _registry_lock
    _registry_lock = threading.Lock()
    for source in list(_live_sources):
        try:
            source._after_fork_in_child()
        except Exception:  # pragma: no cover
            pass


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
