"""What the daemon benchmarks share: HTTP/1.1 over the daemon's Unix socket, and what /proc says
of a process. Python 3 standard library only, and self-contained: bench-clients.py also sends
this file's text, as the start of their program, to the child processes it runs as other uids
(which may not be able to read the checkout).
"""
import os, socket, time

# --- HTTP over the Unix socket -------------------------------------------------------------


def connect(path, timeout=10.0, rcvbuf=None):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    if rcvbuf:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.settimeout(timeout)
    # A full listen backlog answers EAGAIN on a Unix socket (no queueing as with TCP): retry.
    deadline = time.monotonic() + timeout
    while True:
        try:
            s.connect(path)
            return s
        except BlockingIOError:
            if time.monotonic() > deadline:
                s.close()
                raise
            time.sleep(0.001)
        except OSError:
            s.close()
            raise


def read_head(s, buf=b""):
    while b"\r\n\r\n" not in buf:
        chunk = s.recv(65536)
        if not chunk:
            raise ConnectionError("connection closed before a response head (%r)" % buf[:200])
        buf += chunk
    head, rest = buf.split(b"\r\n\r\n", 1)
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return status, headers, rest


def read_response(s):
    """One response: (status, headers, body). Content-length, or to EOF with connection: close."""
    status, headers, body = read_head(s)
    if "content-length" in headers:
        length = int(headers["content-length"])
        while len(body) < length:
            chunk = s.recv(65536)
            if not chunk:
                raise ConnectionError("connection closed in a response body")
            body += chunk
        return status, headers, body[:length]
    while True:
        chunk = s.recv(65536)
        if not chunk:
            return status, headers, body
        body += chunk


def request(s, method, target, close=False):
    extra = "connection: close\r\n" if close else ""
    length = "content-length: 0\r\n" if method == "POST" else ""
    s.sendall(("%s %s HTTP/1.1\r\nhost: geoattrd\r\n%s%s\r\n" % (method, target, length, extra)).encode())
    return read_response(s)


# --- /proc ---------------------------------------------------------------------------------


def cpu_seconds(pid):
    """The process's CPU time so far, user and system, in seconds."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def status_mb(pid):
    """VmRSS, RssAnon and RssFile of the process in MB (2^20 bytes), as far as it has them."""
    values = {}
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            key = line.split(":")[0]
            if key in ("VmRSS", "RssAnon", "RssFile"):
                values[key] = int(line.split()[1]) / 1024
    return values
