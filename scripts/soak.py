#!/usr/bin/env python3
"""Soak benchmark: an hour of field life compressed into minutes.

The release geoattrd takes fixes from a real gpsd (gpsfake replaying a moving track in a loop,
fast cadence) with a very short TTL, so it fixes, geocodes (with the world index when it was
built) and rewrites its cache over and over, while clients hammer its socket: keep-alive GETs,
a new connection per request, /v1/status and /metrics, and /v1/watch streams opened and dropped.
Resident memory, open descriptors and threads are sampled throughout.

It passes when, after the warm-up, anonymous memory does not grow beyond noise (the last fifth of
the samples against the first fifth), and the daemon holds as many descriptors and threads
after the load as before it (both measured paused in the background, with no fix in flight). Figures go to standard output and, with --json, to a file.

Usage: scripts/soak.py [--fixes 1000] [--requests 100000] [--binary PATH] [--index PATH]
       (default binary: .build/release/geoattrd; CI runs a short form: --fixes 100 --requests 10000)
"""
import argparse, json, os, re, signal, socket, statistics, subprocess, sys, tempfile, threading, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def nmea(body):
    checksum = 0
    for ch in body.encode():
        checksum ^= ch
    return "$%s*%02X\r\n" % (body, checksum)


def coordinate(value, degrees_width, positive, negative):
    hemisphere = positive if value >= 0 else negative
    value = abs(value)
    degrees = int(value)
    minutes = (value - degrees) * 60
    return "%0*d%07.4f" % (degrees_width, degrees, minutes), hemisphere


def track(epochs):
    """A receiver driving east through Zurich and back: a new position every epoch, 300 m apart,
    so each fix is a new place to geocode (farther than places.stationary_distance_m)."""
    lines = []
    for i in range(epochs):
        leg = i if i < epochs // 2 else epochs - i
        lat, lon = 47.3769, 8.40 + leg * 0.004
        seconds = 12 * 3600 + i
        hhmmss = "%02d%02d%02d.00" % (seconds // 3600, seconds // 60 % 60, seconds % 60)
        la, ns = coordinate(lat, 2, "N", "S")
        lo, ew = coordinate(lon, 3, "E", "W")
        lines.append(nmea("GPGGA,%s,%s,%s,%s,%s,1,08,1.2,408.0,M,47.0,M,," % (hhmmss, la, ns, lo, ew)))
        lines.append(nmea("GPGSA,A,3,01,02,03,04,05,06,07,08,,,,,2.0,1.2,1.6"))
        lines.append(nmea("GPRMC,%s,A,%s,%s,%s,%s,30.0,90.0,211126,,,A" % (hhmmss, la, ns, lo, ew)))
    return "".join(lines)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def process_sample(pid):
    values = {}
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            key = line.split(":")[0]
            if key in ("VmRSS", "RssAnon", "RssFile", "Threads"):
                values[key] = int(line.split()[1])
    return {
        "rss_mb": values["VmRSS"] / 1024, "anon_mb": values["RssAnon"] / 1024, "file_mb": values["RssFile"] / 1024,
        "threads": values["Threads"], "fds": len(os.listdir("/proc/%d/fd" % pid)),
    }


class Client:
    """HTTP/1.1 over the Unix socket, by hand: the load must not depend on anything installed."""

    def __init__(self, path):
        self.path = path
        self.sock = None
        self.buffer = b""

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(10)
        self.sock.connect(self.path)
        self.buffer = b""

    def close(self):
        if self.sock:
            self.sock.close()
        self.sock = None

    def get(self, target, close=False):
        if self.sock is None:
            self.connect()
        self.sock.sendall(("GET %s HTTP/1.1\r\nHost: geoattrd\r\n%s\r\n" % (
            target, "Connection: close\r\n" if close else "")).encode())
        while b"\r\n\r\n" not in self.buffer:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("closed before the response head")
            self.buffer += chunk
        head, self.buffer = self.buffer.split(b"\r\n\r\n", 1)
        status = int(head.split(b" ", 2)[1])
        match = re.search(rb"(?i)\r\ncontent-length: *(\d+)", head)
        length = int(match.group(1)) if match else 0
        while len(self.buffer) < length:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("closed mid-body")
            self.buffer += chunk
        body, self.buffer = self.buffer[:length], self.buffer[length:]
        if close:
            self.close()
        return status, body


class Load:
    def __init__(self, socket_path, total, rate):
        self.socket_path, self.total, self.rate = socket_path, total, rate
        self.done = 0
        self.errors = []
        self.watches = 0
        self.lock = threading.Lock()
        self.stop = threading.Event()

    def take(self):
        with self.lock:
            if self.done >= self.total:
                return False
            self.done += 1
            return True

    def paced(self, worker_share, body):
        """Runs body() about rate*worker_share times a second until the total is reached."""
        interval = 1.0 / (self.rate * worker_share)
        next_at = time.monotonic()
        while not self.stop.is_set() and self.take():
            try:
                body()
            except (OSError, ConnectionError, ValueError) as error:
                self.errors.append("%s: %s" % (body.__name__, error))
            next_at += interval
            delay = next_at - time.monotonic()
            if delay > 0:
                time.sleep(delay)

    def keep_alive(self):
        client = Client(self.socket_path)
        def request():
            status, _ = client.get("/v1/attributes")
            if status != 200:
                raise ValueError("keep-alive GET answered %d" % status)
        self.paced(0.6, request)
        client.close()

    def fresh_connections(self):
        def request():
            status, _ = Client(self.socket_path).get("/v1/attributes?format=otel", close=True)
            if status != 200:
                raise ValueError("GET on a new connection answered %d" % status)
        self.paced(0.3, request)

    def status_and_metrics(self):
        client = Client(self.socket_path)
        targets = ["/v1/status", "/metrics"]
        def request():
            target = targets[self.done % 2]
            status, _ = client.get(target)
            if status != 200:
                raise ValueError("%s answered %d" % (target, status))
        self.paced(0.1, request)
        client.close()

    def watches_loop(self):
        # A watch stream opened, its first event read, then dropped mid-stream; over and over.
        while not self.stop.is_set():
            try:
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.settimeout(10)
                s.connect(self.socket_path)
                s.sendall(b"GET /v1/watch HTTP/1.1\r\nHost: geoattrd\r\n\r\n")
                data = b""
                while b"\ndata:" not in data and b"\n\ndata:" not in data and b"data:" not in data:
                    chunk = s.recv(65536)
                    if not chunk:
                        raise ConnectionError("watch closed before its first event")
                    data += chunk
                s.close()
                self.watches += 1
            except (OSError, ConnectionError) as error:
                self.errors.append("watch: %s" % error)
            self.stop.wait(0.5)


def metric(socket_path, name):
    _, body = Client(socket_path).get("/metrics", close=True)
    total = 0.0
    for line in body.decode().splitlines():
        if line.startswith(name):
            total += float(line.rsplit(" ", 1)[1])
    return total


def set_state(path, state):
    # As a supervisor does: write beside, rename over.
    with open(path + ".new", "w") as f:
        f.write(state + "\n")
    os.rename(path + ".new", path)


def quiet_sample(pid, state_file, socket_path):
    """A sample with no fix in flight (a fix holds gpsd's socket and a wake pipe): the daemon is
    put in the background, which pauses the schedule, and brought back after."""
    set_state(state_file, "background")
    deadline = time.monotonic() + 30
    while b'"state":"background"' not in Client(socket_path).get("/v1/status", close=True)[1].replace(b" ", b""):
        if time.monotonic() > deadline:
            sys.exit("soak: geoattrd did not go to the background")
        time.sleep(0.05)
    time.sleep(2)
    sample = process_sample(pid)
    set_state(state_file, "foreground")
    return sample


def wait_for(path, text, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with open(path, errors="replace") as f:
            if text in f.read():
                return True
        time.sleep(0.05)
    return False


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", default=os.path.join(ROOT, ".build/release/geoattrd"))
    parser.add_argument("--index", default=os.path.join(ROOT, "cache/geodata/world.gidx"))
    parser.add_argument("--fixes", type=int, default=1000)
    parser.add_argument("--requests", type=int, default=100000)
    parser.add_argument("--rate", type=float, default=600, help="requests per second, spread over the run")
    parser.add_argument("--sample-every", type=float, default=2.0)
    parser.add_argument("--ttl", type=float, default=0.1)
    parser.add_argument("--cycle", type=float, default=0.01, help="gpsfake's delay between sentences")
    parser.add_argument("--max-anon-growth-mb", type=float, default=0.5)
    parser.add_argument("--json", help="write samples and figures here")
    args = parser.parse_args()
    if not os.access(args.binary, os.X_OK):
        sys.exit("soak: no geoattrd at %s (swift build -c release --product geoattrd)" % args.binary)

    work = tempfile.mkdtemp(prefix="geoattrd-soak-")
    with open(os.path.join(work, "track.nmea"), "w") as f:
        f.write(track(240))
    port = free_port()
    # Not the harness's GEOATTRD_* variables (GEOATTRD_BINARY, GEOATTRD_TEST_*): geoattrd reads
    # that prefix as its configuration and refuses a name that is no key.
    env = {key: value for key, value in os.environ.items() if not key.startswith("GEOATTRD_")}
    env["TMPDIR"] = work
    gpsfake_log = open(os.path.join(work, "gpsfake.log"), "w")
    # Without -1 gpsfake replays the track over and over.
    gpsfake = subprocess.Popen(["gpsfake", "-q", "-P", str(port), "-c", str(args.cycle), os.path.join(work, "track.nmea")],
                               stdout=subprocess.DEVNULL, stderr=gpsfake_log, env=env, start_new_session=True)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            time.sleep(0.1)
    else:
        sys.exit("soak: gpsfake did not listen on port %d" % port)

    config = os.path.join(work, "geoattrd.yaml")
    with open(config, "w") as f:
        f.write('gpsd:\n  endpoint: "127.0.0.1:%d"\nschedule:\n  ttl_s: %s\n  retry_initial_s: 0.2\n  retry_max_s: 1\n'
                'fix:\n  timeout_s: 10\n' % (port, args.ttl))
    socket_path = os.path.join(work, "api.sock")
    state_file = os.path.join(work, "state")
    command = [args.binary, "--config", config, "--state-dir", work, "--state-file", state_file,
               "--socket", socket_path]
    index_note = "no index (%s absent): location attributes only" % args.index
    if os.path.exists(args.index):
        command += ["--index", args.index]
        index_note = "world index %s" % args.index
    else:
        command += ["--index", os.path.join(work, "no-index.gidx")]
    daemon_log = os.path.join(work, "geoattrd.log")
    daemon = subprocess.Popen(command, stderr=open(daemon_log, "w"), env=env, start_new_session=True)
    failures = []
    try:
        if not wait_for(daemon_log, "scheduler started", 30):
            sys.exit("soak: geoattrd did not start; log in %s" % daemon_log)
        deadline = time.monotonic() + 60
        while metric(socket_path, "geoattrd_fixes_total{outcome=\"fix\"}") < 1:
            if time.monotonic() > deadline:
                sys.exit("soak: no first fix within 60 s; log in %s" % daemon_log)
            time.sleep(0.2)
        before = quiet_sample(daemon.pid, state_file, socket_path)
        fixes_at_start = metric(socket_path, "geoattrd_fixes_total{outcome=\"fix\"}")
        print("soak: %s, TTL %.2f s, gpsfake cycle %.3f s; before the load: %s" % (index_note, args.ttl, args.cycle, before))

        load = Load(socket_path, args.requests, args.rate)
        threads = [threading.Thread(target=t, daemon=True) for t in (load.keep_alive, load.fresh_connections, load.status_and_metrics)]
        watcher = threading.Thread(target=load.watches_loop, daemon=True)
        for t in threads + [watcher]:
            t.start()
        samples = []
        started = time.monotonic()
        fixes = 0
        while True:
            time.sleep(args.sample_every)
            if daemon.poll() is not None:
                failures.append("geoattrd exited with %s" % daemon.returncode)
                break
            sample = process_sample(daemon.pid)
            fixes = metric(socket_path, "geoattrd_fixes_total{outcome=\"fix\"}") - fixes_at_start
            sample.update(t=round(time.monotonic() - started, 1), fixes=int(fixes), requests=load.done)
            samples.append(sample)
            print("  t=%6.1fs fixes %5d requests %6d  rss %.1f MB (anon %.1f)  fds %d  threads %d" % (
                sample["t"], fixes, load.done, sample["rss_mb"], sample["anon_mb"], sample["fds"], sample["threads"]), flush=True)
            if fixes >= args.fixes and load.done >= args.requests:
                break
            if time.monotonic() - started > max(3600, args.fixes * 2):
                failures.append("did not reach the fix and request counts in time")
                break
        load.stop.set()
        for t in threads + [watcher]:
            t.join(timeout=15)
        elapsed = time.monotonic() - started
        after = quiet_sample(daemon.pid, state_file, socket_path)
        other_outcomes = metric(socket_path, "geoattrd_fixes_total") - metric(socket_path, "geoattrd_fixes_total{outcome=\"fix\"}")

        warm = samples[len(samples) // 10:] or samples
        fifth = max(1, len(warm) // 5)
        first = statistics.mean(s["anon_mb"] for s in warm[:fifth])
        last = statistics.mean(s["anon_mb"] for s in warm[-fifth:])
        rss_first = statistics.mean(s["rss_mb"] for s in warm[:fifth])
        rss_last = statistics.mean(s["rss_mb"] for s in warm[-fifth:])
        figures = {
            "seconds": round(elapsed, 1), "fixes": int(fixes), "other_fix_outcomes": int(other_outcomes),
            "requests": load.done, "watch_streams": load.watches, "request_errors": len(load.errors),
            "anon_mb_first_fifth": round(first, 2), "anon_mb_last_fifth": round(last, 2),
            "rss_mb_first_fifth": round(rss_first, 2), "rss_mb_last_fifth": round(rss_last, 2),
            "fds_before": before["fds"], "fds_after": after["fds"], "fds_max": max(s["fds"] for s in samples),
            "threads_before": before["threads"], "threads_after": after["threads"],
            "threads_max": max(s["threads"] for s in samples),
        }
        print("soak: %d fixes (+%d other outcomes) and %d requests (%d watch streams dropped mid-stream) in %.0f s, %d request errors" % (
            fixes, other_outcomes, load.done, load.watches, elapsed, len(load.errors)))
        print("soak: anonymous memory %.2f -> %.2f MB, resident %.2f -> %.2f MB (first and last fifth after warm-up)" % (
            first, last, rss_first, rss_last))
        print("soak: descriptors %d before the load, %d after (max %d during); threads %d before, %d after (max %d)" % (
            before["fds"], after["fds"], figures["fds_max"], before["threads"], after["threads"], figures["threads_max"]))
        if load.errors:
            failures.append("%d request errors, first: %s" % (len(load.errors), load.errors[:3]))
        if last - first > args.max_anon_growth_mb:
            failures.append("anonymous memory grew by %.2f MB (limit %.1f)" % (last - first, args.max_anon_growth_mb))
        if after["fds"] > before["fds"]:
            failures.append("descriptors grew from %d to %d" % (before["fds"], after["fds"]))
        if after["threads"] > before["threads"] + 2:
            failures.append("threads grew from %d to %d" % (before["threads"], after["threads"]))
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"figures": figures, "samples": samples, "failures": failures}, f, indent=1)
    finally:
        if daemon.poll() is None:
            daemon.send_signal(signal.SIGTERM)
            try:
                status = daemon.wait(timeout=15)
                if status != 0:
                    failures.append("geoattrd exited with %d on SIGTERM" % status)
            except subprocess.TimeoutExpired:
                daemon.kill()
                failures.append("geoattrd did not stop on SIGTERM")
        try:
            os.killpg(gpsfake.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        gpsfake.wait()
    if failures:
        print("soak: FAILED: " + "; ".join(failures) + " (work directory %s)" % work, file=sys.stderr)
        sys.exit(1)
    print("soak: passed")


if __name__ == "__main__":
    main()
