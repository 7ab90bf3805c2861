"""A minimal HTTP/1.1 client over a Unix domain socket, and a Server-Sent Events parser.

Standard library only. Everything here is bounded: the response head, a body, one event.
It runs on the background thread (and once in the resource detector), never on the
application's hot path.
"""

from __future__ import annotations

import json
import os
import socket
import stat
import time
from typing import Callable, Dict, Iterator, List, Optional, Tuple

DEFAULT_SOCKET = "/run/geoattrd/geoattrd.sock"
SOCKET_ENV = "GEOATTRD_SOCKET"

MAX_HEAD_BYTES = 16 * 1024
MAX_BODY_BYTES = 64 * 1024
MAX_EVENT_BYTES = 64 * 1024
_RECV_SIZE = 16 * 1024


def resolve_socket_path(socket_path: Optional[str] = None) -> str:
    """The argument, else ``$GEOATTRD_SOCKET``, else ``/run/geoattrd/geoattrd.sock``."""
    if socket_path:
        return os.fspath(socket_path)
    return os.environ.get(SOCKET_ENV) or DEFAULT_SOCKET


class Failure(Exception):
    """A failure to get attributes. ``key`` identifies the kind, so that a failure that repeats
    is logged once; ``str()`` says what happened and what to do."""

    def __init__(self, key: str, message: str):
        super().__init__(message)
        self.key = key


class WatchUnavailable(Failure):
    """The daemon does not offer ``/v1/watch`` (or it is unusable): poll instead."""


class Deadline:
    """A point in time that socket operations must not pass (``None``: a per-operation
    timeout only)."""

    def __init__(self, seconds: Optional[float]):
        self.at = None if seconds is None else time.monotonic() + seconds

    def remaining(self) -> Optional[float]:
        if self.at is None:
            return None
        left = self.at - time.monotonic()
        if left <= 0:
            raise Failure("timeout", "geoattrd did not answer in time")
        return left


def connect(path: str, timeout: Optional[float]) -> socket.socket:
    """Connects to the daemon's socket, with failures named for an operator."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise Failure("absent", f"no geoattrd socket at {path} (is geoattrd running?)") from None
    except PermissionError:
        raise Failure("permission", f"cannot reach {path}: permission denied (a directory on the way is not traversable)") from None
    except OSError as e:
        raise Failure(f"stat-{e.errno}", f"cannot reach {path}: {e.strerror}") from None
    if not stat.S_ISSOCK(st.st_mode):
        raise Failure("not-a-socket", f"{path} is not a socket")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | getattr(socket, "SOCK_CLOEXEC", 0))
    try:
        sock.settimeout(timeout)
        sock.connect(path)
    except BaseException as e:
        sock.close()
        if isinstance(e, FileNotFoundError):
            raise Failure("absent", f"no geoattrd socket at {path} (is geoattrd running?)") from None
        if isinstance(e, PermissionError):
            raise Failure(
                "permission",
                f"permission denied on {path}: add this user to the socket's group (geoattr) or widen socket.mode",
            ) from None
        if isinstance(e, ConnectionRefusedError):
            raise Failure("refused", f"nothing listens on {path} (geoattrd stopped?)") from None
        if isinstance(e, socket.timeout):
            raise Failure("timeout", f"connecting to {path} timed out") from None
        if isinstance(e, OSError):
            raise Failure(f"connect-{e.errno}", f"cannot connect to {path}: {e.strerror or e}") from None
        raise
    return sock


class Response:
    def __init__(self, status: int, reason: str, headers: Dict[str, str], reader: "Reader"):
        self.status = status
        self.reason = reason
        self.headers = headers
        self.reader = reader

    def body_pieces(self, limit: int) -> Iterator[bytes]:
        """The body as it arrives (chunked, by length or to the end), at most ``limit`` bytes
        in a piece; raises :class:`Failure` when the body is cut short."""
        te = self.headers.get("transfer-encoding", "").lower()
        if "chunked" in te:
            yield from self.reader.chunked(limit)
        elif "content-length" in self.headers:
            try:
                length = int(self.headers["content-length"])
            except ValueError:
                raise Failure("protocol", "geoattrd sent an invalid Content-Length") from None
            if length < 0:
                raise Failure("protocol", "geoattrd sent an invalid Content-Length")
            yield from self.reader.exactly(length, limit)
        else:
            yield from self.reader.until_close(limit)

    def read_body(self, max_bytes: int = MAX_BODY_BYTES) -> bytes:
        out = bytearray()
        for piece in self.body_pieces(_RECV_SIZE):
            out += piece
            if len(out) > max_bytes:
                raise Failure("oversized-body", f"geoattrd's answer is larger than {max_bytes} bytes")
        return bytes(out)


class Reader:
    """Buffered reads from a socket, each bounded by the deadline or the socket's timeout.

    ``on_quiet``, when set, is called each time a read times out: it may raise, and the read
    goes on waiting if it returns True (it may set the socket's next timeout)."""

    def __init__(self, sock: socket.socket, deadline: Optional[Deadline] = None):
        self.sock = sock
        self.deadline = deadline
        self.buf = bytearray()
        self.eof = False
        self.on_quiet: Optional[Callable[["Reader"], bool]] = None
        self.received_at = time.monotonic()

    def _fill(self) -> bool:
        if self.eof:
            return False
        if self.deadline is not None and self.deadline.at is not None:
            self.sock.settimeout(self.deadline.remaining())
        while True:
            try:
                data = self.sock.recv(_RECV_SIZE)
                break
            except socket.timeout:
                if self.on_quiet is None or not self.on_quiet(self):
                    raise Failure("timeout", "geoattrd did not answer in time") from None
            except OSError as e:
                raise Failure(f"recv-{e.errno}", f"reading from geoattrd failed: {e.strerror or e}") from None
        if not data:
            self.eof = True
            return False
        self.received_at = time.monotonic()
        self.buf += data
        return True

    def line(self, limit: int) -> bytes:
        """One CRLF- (or LF-) terminated line without its terminator."""
        while True:
            i = self.buf.find(b"\n")
            if i >= 0:
                if i > limit:
                    break
                out = bytes(self.buf[:i])
                del self.buf[: i + 1]
                return out[:-1] if out.endswith(b"\r") else out
            if len(self.buf) > limit:
                break
            if not self._fill():
                raise Failure("cut", "geoattrd closed the connection mid-answer")
        raise Failure("protocol", "geoattrd sent an over-long line")

    def head(self) -> Tuple[int, str, Dict[str, str]]:
        total = 0
        status_line = self.line(MAX_HEAD_BYTES)
        total += len(status_line)
        parts = status_line.decode("latin-1").split(" ", 2)
        if len(parts) < 2 or not parts[0].startswith("HTTP/1.") or not parts[1].isdigit():
            raise Failure("protocol", "geoattrd's answer is not HTTP/1.x")
        headers: Dict[str, str] = {}
        while True:
            line = self.line(MAX_HEAD_BYTES)
            total += len(line) + 2
            if total > MAX_HEAD_BYTES:
                raise Failure("protocol", "geoattrd's response head is too large")
            if not line:
                break
            name, sep, value = line.decode("latin-1").partition(":")
            if not sep:
                raise Failure("protocol", "geoattrd sent a malformed header")
            headers[name.strip().lower()] = value.strip()
        return int(parts[1]), (parts[2] if len(parts) > 2 else ""), headers

    def _take(self, n: int) -> bytes:
        out = bytes(self.buf[:n])
        del self.buf[:n]
        return out

    def exactly(self, length: int, piece: int) -> Iterator[bytes]:
        left = length
        while left > 0:
            if not self.buf and not self._fill():
                raise Failure("cut", "geoattrd closed the connection mid-answer")
            out = self._take(min(left, piece, len(self.buf)))
            left -= len(out)
            yield out

    def until_close(self, piece: int) -> Iterator[bytes]:
        while True:
            if not self.buf and not self._fill():
                return
            yield self._take(min(piece, len(self.buf)))

    def chunked(self, piece: int) -> Iterator[bytes]:
        while True:
            size_line = self.line(1024).split(b";", 1)[0].strip()
            try:
                size = int(size_line, 16)
            except ValueError:
                raise Failure("protocol", "geoattrd sent a malformed chunk") from None
            if size < 0:
                raise Failure("protocol", "geoattrd sent a malformed chunk")
            if size == 0:
                # Trailers, then the empty line.
                while self.line(MAX_HEAD_BYTES):
                    pass
                return
            yield from self.exactly(size, piece)
            if self.line(2):
                raise Failure("protocol", "geoattrd sent a malformed chunk")


def request(
    sock: socket.socket,
    method: str,
    target: str,
    headers: Optional[Dict[str, str]] = None,
    deadline: Optional[Deadline] = None,
) -> Response:
    """Sends one request and reads the response head."""
    lines = [f"{method} {target} HTTP/1.1", "Host: geoattrd", "User-Agent: geoattrd-opentelemetry"]
    for name, value in (headers or {}).items():
        lines.append(f"{name}: {value}")
    data = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
    try:
        if deadline is not None and deadline.at is not None:
            sock.settimeout(deadline.remaining())
        sock.sendall(data)
    except socket.timeout:
        raise Failure("timeout", "geoattrd did not take the request in time") from None
    except OSError as e:
        raise Failure(f"send-{e.errno}", f"writing to geoattrd failed: {e.strerror or e}") from None
    reader = Reader(sock, deadline)
    status, reason, response_headers = reader.head()
    return Response(status, reason, response_headers, reader)


def _error_field(body: bytes, name: str) -> str:
    """A string field of the daemon's error body, or ``""``."""
    try:
        value = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return ""
    if isinstance(value, dict) and isinstance(value.get(name), str):
        return value[name]
    return ""


def error_code(body: bytes) -> str:
    """The daemon's stable error code from an error body, or ``""``."""
    return _error_field(body, "error")


def error_message(body: bytes) -> str:
    """The daemon's message from an error body (one line, at most 500 characters), or ``""``."""
    return " ".join(_error_field(body, "message").split())[:500]


def status_failure(status: int, body: bytes, what: str) -> Failure:
    code = error_code(body)
    if status == 403:
        # The daemon's message names the access.rules entry that refuses this process.
        reason = error_message(body) or "this uid may not read location data; see access.rules"
        return Failure("http-403", f"geoattrd refused {what} (403 {code or 'forbidden'}): {reason}")
    return Failure(f"http-{status}-{code}", f"geoattrd answered {what} with {status} {code}".rstrip())


class EventTooLarge(Failure):
    pass


class SSEParser:
    """Incremental Server-Sent Events parser (the WHATWG rules: LF, CRLF or CR line ends;
    ``:`` comments; ``data`` lines joined with LF; an event dispatched at a blank line).
    An event larger than ``max_event_bytes`` raises :class:`EventTooLarge`. An event not
    finished when the stream ends is never returned."""

    def __init__(self, max_event_bytes: int = MAX_EVENT_BYTES):
        self.max_event_bytes = max_event_bytes
        self._partial = bytearray()
        self._pending_cr = False
        self._event_bytes = 0
        self._data: List[str] = []
        self._event_type = ""
        self._id: Optional[str] = None
        self.last_id: Optional[str] = None
        self.comments = 0

    @property
    def mid_event(self) -> bool:
        """True while part of an event (or of a line) has been read and not dispatched."""
        return bool(self._partial) or self._event_bytes > 0

    def feed(self, data: bytes) -> List[Tuple[str, str, Optional[str]]]:
        """Returns the events completed by ``data`` as ``(type, data, id)``."""
        events: List[Tuple[str, str, Optional[str]]] = []
        start = 0
        n = len(data)
        if self._pending_cr and n and data[0:1] == b"\n":
            start = 1
        self._pending_cr = False
        while start < n:
            i_lf = data.find(b"\n", start)
            i_cr = data.find(b"\r", start)
            if i_lf < 0 and i_cr < 0:
                self._partial += data[start:]
                self._check_size()
                break
            if i_cr >= 0 and (i_lf < 0 or i_cr < i_lf):
                end, nxt = i_cr, i_cr + 1
                if nxt < n:
                    if data[nxt : nxt + 1] == b"\n":
                        nxt += 1
                else:
                    self._pending_cr = True
            else:
                end, nxt = i_lf, i_lf + 1
            self._partial += data[start:end]
            self._check_size()
            line = bytes(self._partial)
            self._partial.clear()
            event = self._line(line)
            if event is not None:
                events.append(event)
            start = nxt
        return events

    def _check_size(self) -> None:
        if self._event_bytes + len(self._partial) > self.max_event_bytes:
            raise EventTooLarge(
                "oversized-event", f"geoattrd sent an event larger than {self.max_event_bytes} bytes; reconnecting"
            )

    def _line(self, raw: bytes) -> Optional[Tuple[str, str, Optional[str]]]:
        if not raw:
            if self._event_bytes == 0:
                return None
            event = None
            if self._data:
                event = (self._event_type or "message", "\n".join(self._data), self._id)
            self._data = []
            self._event_type = ""
            self._id = None
            self._event_bytes = 0
            return event
        if raw.startswith(b":"):
            self.comments += 1
            return None
        self._event_bytes += len(raw) + 1
        line = raw.decode("utf-8", errors="replace")
        name, sep, value = line.partition(":")
        if sep and value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event_type = value
        elif name == "id":
            if "\0" not in value:
                self._id = value
                self.last_id = value
        # "retry" and unknown fields are ignored.
        return None


__all__ = [
    "DEFAULT_SOCKET",
    "SOCKET_ENV",
    "Failure",
    "WatchUnavailable",
    "EventTooLarge",
    "SSEParser",
    "resolve_socket_path",
    "connect",
    "request",
    "status_failure",
]
