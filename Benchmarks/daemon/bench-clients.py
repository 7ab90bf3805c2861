#!/usr/bin/env python3
"""What misbehaving clients cost the daemon and the other clients (watch streams' backpressure
and the per-uid connection cap, RELIABILITY.md):

  figure 1  stalled watchers: the daemon's memory (VmRSS) while --watchers `GET /v1/watch`
            streams never read and --refreshes `POST /v1/refresh?wait=5` each make one update
            event on every stream, spread over >= 50 heartbeat intervals; the same with
            watchers that read everything, as the peer. Target: peak within 10 MB of idle, and
            back near idle (within --near-mb) 5 s after the watchers close.
  figure 2  one uid holding its cap: uid A (setpriv, not root) opens api.max_connections_per_uid
            connections and holds them (one more must get 503 too_many_connections) while uid B
            does --requests sequential `GET /v1/attributes`, each on a fresh connection
            (connect, request with `connection: close`, read to EOF); the same loop before A
            takes its connections, as the peer. Target: p99 under 10 ms with A holding its cap.

Each case starts its own daemon (static location, gpsd disabled, no index) in a temporary
directory, so that every memory figure has its own idle baseline. Runs as root (the watchers and
the refreshes are root: exempt from the per-uid cap, allowed to refresh). Python 3 standard
library only; the uid children run /usr/bin/python3 (pyenv shims are not executable by them).
Exits non-zero only if the daemon does not start or a step fails; targets are printed as
met / not met.

Usage: Benchmarks/daemon/bench-clients.py [--binary PATH]   (default: .build/release/geoattrd)
"""
import argparse, json, math, os, re, shutil, signal, statistics, subprocess, sys
import tempfile, threading, time, traceback

import daemonbench
from daemonbench import connect, cpu_seconds, read_head, request, status_mb

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RCVBUF = 4096
CHILD_PYTHON = "/usr/bin/python3"

# HTTP over the Unix socket, for this script and the children: they get daemonbench.py's text as
# the start of their -c program.
with open(daemonbench.__file__, encoding="utf-8") as source:
    HTTP_HELPERS = source.read()

# --- children ------------------------------------------------------------------------------

# Root, as a separate process so that draining does not compete with the refresh loop for this
# interpreter: opens N watch streams, says "ready" once each has its head and first event, drains
# all of them until a line on stdin, then prints per-stream counts as JSON.
READER_CHILD = HTTP_HELPERS + r'''
import json, os, re, selectors, sys
path, n, rcvbuf = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
EVENT, BEAT = b"event: attributes", b": heartbeat"
KEEP = max(len(EVENT), len(BEAT), 40)
ID = re.compile(rb"\nid: (\d+)\n")
socks, state = [], []
for i in range(n):
    s = connect(path, 10.0, rcvbuf)
    s.sendall(b"GET /v1/watch HTTP/1.1\r\nhost: geoattrd\r\n\r\n")
    status, headers, rest = read_head(s)
    if status != 200:
        print(json.dumps({"error": "watch %d: status %d" % (i, status)}), flush=True)
        sys.exit(1)
    while EVENT not in rest:
        chunk = s.recv(65536)
        if not chunk:
            raise ConnectionError("watch %d closed before its first event" % i)
        rest += chunk
    socks.append(s)
    state.append({"bytes": len(rest), "events": rest.count(EVENT), "beats": rest.count(BEAT),
                  "tail": b"\n" + rest[-KEEP:], "last_id": 0, "closed": False})
    ids = ID.findall(b"\n" + rest)
    if ids:
        state[-1]["last_id"] = int(ids[-1])
sel = selectors.DefaultSelector()
for i, s in enumerate(socks):
    s.setblocking(False)
    sel.register(s, selectors.EVENT_READ, i)
sel.register(sys.stdin, selectors.EVENT_READ, -1)
print("ready", flush=True)
stop = False
while not stop:
    for key, _ in sel.select(1.0):
        i = key.data
        if i < 0:
            stop = True
            continue
        try:
            data = socks[i].recv(262144)
        except BlockingIOError:
            continue
        st = state[i]
        if not data:
            st["closed"] = True
            sel.unregister(socks[i])
            continue
        buf = st["tail"] + data
        st["bytes"] += len(data)
        # The tail is shorter than either pattern plus its lead, so nothing is counted twice.
        st["events"] += buf.count(EVENT) - st["tail"].count(EVENT)
        st["beats"] += buf.count(BEAT) - st["tail"].count(BEAT)
        ids = ID.findall(buf)
        if ids:
            st["last_id"] = int(ids[-1])
        st["tail"] = buf[-KEEP:]
for s in socks:
    s.close()
for st in state:
    del st["tail"]
print(json.dumps(state), flush=True)
'''

# uid A: opens N connections, each answered 200 to a keep-alive GET /v1/attributes, and holds
# them; probes one more. Then on each stdin line: "probe" probes one more again, "stop" asks
# every held connection once more (still open?) and exits.
HOLDER_CHILD = HTTP_HELPERS + r'''
import json, sys
path, n = sys.argv[1], int(sys.argv[2])

def probe():
    s = connect(path, 5.0)
    try:
        try:
            s.sendall(b"GET /v1/attributes HTTP/1.1\r\nhost: geoattrd\r\n\r\n")
        except OSError:
            pass  # refused connections are answered and closed without reading
        status, headers, body = read_response(s)
        try:
            error = json.loads(body).get("error")
        except ValueError:
            error = None
        return {"status": status, "error": error, "body": body.decode("utf-8", "replace")[:200]}
    except OSError as e:
        return {"status": None, "error": "%s" % e, "body": ""}
    finally:
        s.close()

held = []
for i in range(n):
    s = connect(path, 5.0)
    status, headers, body = request(s, "GET", "/v1/attributes")
    if status != 200:
        print(json.dumps({"error": "connection %d of uid A answered %d: %s" % (i + 1, status, body[:200])}), flush=True)
        sys.exit(1)
    held.append(s)
print(json.dumps({"held": len(held), "extra": probe()}), flush=True)
for line in sys.stdin:
    if line.strip() == "probe":
        print(json.dumps({"held": len(held), "extra": probe()}), flush=True)
    else:
        ok = 0
        for s in held:
            try:
                status, _, _ = request(s, "GET", "/v1/attributes")
                ok += status == 200
            except OSError:
                pass
        print(json.dumps({"still_served": ok}), flush=True)
        break
'''

# uid B: N sequential GET /v1/attributes, each on a fresh connection; latencies in seconds.
LOOP_CHILD = HTTP_HELPERS + r'''
import json, sys
path, n = sys.argv[1], int(sys.argv[2])
lat, bad = [], {}
for i in range(n):
    t0 = time.perf_counter()
    try:
        s = connect(path, 5.0)
        status, headers, body = request(s, "GET", "/v1/attributes", close=True)
        s.close()
    except OSError as e:
        status = str(e)
    lat.append(time.perf_counter() - t0)
    if status != 200:
        bad[str(status)] = bad.get(str(status), 0) + 1
print(json.dumps({"latencies": lat, "bad": bad}), flush=True)
'''

# --- process bookkeeping -------------------------------------------------------------------

CHILDREN = []  # every Popen this script started, killed on the way out


def spawn(argv, **kw):
    p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, cwd="/", **kw)
    CHILDREN.append(p)
    return p


def as_uid(uid, program, *args):
    return spawn(["setpriv", "--reuid=%d" % uid, "--regid=%d" % uid, "--clear-groups",
                  CHILD_PYTHON, "-c", program] + [str(a) for a in args])


def child_line(p, what, timeout):
    """The child's next stdout line; fails if it exits or takes too long."""
    result = {}

    def read():
        result["line"] = p.stdout.readline()
    t = threading.Thread(target=read, daemon=True)
    t.start()
    t.join(timeout)
    line = result.get("line")
    if not line:
        err = ""
        if p.poll() is not None:
            err = p.stderr.read()[-2000:]
        raise RuntimeError("%s: no answer within %.0f s (exit %s) %s" % (what, timeout, p.poll(), err))
    return line.strip()


def finish(p, timeout=10):
    try:
        p.wait(timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()


def kill_all():
    for p in CHILDREN:
        if p.poll() is None:
            try:
                p.kill()
            except OSError:
                pass
            try:
                p.wait(5)
            except subprocess.TimeoutExpired:
                pass


# --- the daemon ----------------------------------------------------------------------------

class StartError(Exception):
    pass


class Daemon:
    def __init__(self, binary, work, heartbeat, per_uid, name):
        self.work, self.name = work, name
        self.sock = os.path.join(work, "api.sock")
        self.config = os.path.join(work, "geoattrd.yaml")
        state = os.path.join(work, "state")
        shutil.rmtree(state, ignore_errors=True)  # each case from an empty cache
        os.mkdir(state)
        with open(self.config, "w") as f:
            f.write("gpsd:\n  enabled: false\n"
                    "static:\n  latitude: 47.3769\n  longitude: 8.5417\n  error_m: 25\n"
                    "socket:\n  path: %s\n  mode: \"0666\"\n"
                    "refresh:\n  burst: 10000\n  interval_s: 0.001\n"
                    "api:\n  heartbeat_s: %s\n  max_connections_per_uid: %d\n" % (self.sock, heartbeat, per_uid))
        self.log = os.path.join(work, "daemon-%s.log" % name)
        argv = [binary, "--config", self.config, "--state-dir", state,
                "--state-file", os.path.join(work, "state-file"), "--index", os.path.join(work, "none.gidx")]
        with open(self.log, "w") as out:
            self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=out, cwd=work)
        CHILDREN.append(self.proc)
        self.pid = self.proc.pid
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise StartError("geoattrd exited with %d at start:\n%s" % (self.proc.returncode, self.log_tail()))
            try:
                s = connect(self.sock, 2.0)
                status, _, _ = request(s, "GET", "/v1/attributes", close=True)
                s.close()
                if status == 200:
                    return
            except OSError:
                pass
            time.sleep(0.02)
        raise StartError("geoattrd did not serve attributes within 20 s:\n%s" % self.log_tail())

    def log_tail(self):
        try:
            with open(self.log) as f:
                return "".join(f.readlines()[-15:])
        except OSError:
            return ""

    def rss_mb(self):
        rss = status_mb(self.pid).get("VmRSS")
        if rss is None:
            raise RuntimeError("no VmRSS for pid %d" % self.pid)
        return rss

    def cpu_s(self):
        return cpu_seconds(self.pid)

    def warm_up_and_settle(self):
        """A few requests of each kind, then the settled resident size (median of 5 over 1 s)."""
        for _ in range(20):
            s = connect(self.sock)
            request(s, "GET", "/v1/attributes", close=True)
            s.close()
        s = connect(self.sock)
        for _ in range(5):
            status, _, body = request(s, "POST", "/v1/refresh?wait=5")
            if status != 200:
                raise RuntimeError("warm-up refresh answered %d: %s" % (status, body[:200]))
        s.close()
        w = connect(self.sock)
        w.sendall(b"GET /v1/watch HTTP/1.1\r\nhost: geoattrd\r\n\r\n")
        read_head(w)
        w.close()
        time.sleep(1.0)
        samples = []
        for _ in range(5):
            samples.append(self.rss_mb())
            time.sleep(0.2)
        return statistics.median(samples)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


class Sampler(threading.Thread):
    """VmRSS every 100 ms while running."""

    def __init__(self, daemon):
        super().__init__(daemon=True)
        self.d, self.samples, self.halt = daemon, [], threading.Event()

    def run(self):
        while not self.halt.is_set():
            self.samples.append(self.d.rss_mb())
            self.halt.wait(0.1)

    def stop(self):
        self.halt.set()
        self.join()
        return max(self.samples) if self.samples else 0.0


def refresh_run(d, count, duration):
    """`count` refreshes with wait, paced evenly over `duration` seconds, on one keep-alive
    connection. Returns (seconds taken, generation of the last result)."""
    s = connect(d.sock, 10.0)
    step = duration / count
    t0 = time.monotonic()
    last = None
    for i in range(count):
        delay = t0 + i * step - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        status, headers, body = request(s, "POST", "/v1/refresh?wait=5")
        if status != 200:
            raise RuntimeError("refresh %d answered %d: %s" % (i + 1, status, body[:200]))
        if headers.get("connection", "").lower() == "close":
            s.close()
            s = connect(d.sock, 10.0)
        last = json.loads(body)["generation"]
    taken = time.monotonic() - t0
    s.close()
    return taken, last


# --- figure 1 ------------------------------------------------------------------------------

def figure1_case(args, work, reading):
    name = "reading" if reading else "stalled"
    d = Daemon(args.binary, work, args.heartbeat, args.per_uid, "fig1-" + name)
    try:
        idle = d.warm_up_and_settle()
        reader, watchers, extra = None, [], {}
        if reading:
            reader = spawn([sys.executable, "-c", READER_CHILD, d.sock, str(args.watchers), str(RCVBUF)])
            line = child_line(reader, "reader child", 30)
            if line != "ready":
                raise RuntimeError("reader child: %s" % line)
        else:
            for i in range(args.watchers):
                w = connect(d.sock, 10.0, RCVBUF)
                w.sendall(b"GET /v1/watch HTTP/1.1\r\nhost: geoattrd\r\n\r\n")
                watchers.append(w)  # never read (until the one drained below)
        time.sleep(0.3)
        with_watchers = d.rss_mb()
        sampler = Sampler(d)
        sampler.start()
        cpu0 = d.cpu_s()
        taken, last_generation = refresh_run(d, args.refreshes, args.run_seconds)
        end = d.rss_mb()
        peak = max(sampler.stop(), end)
        cpu = d.cpu_s() - cpu0
        if reading:
            time.sleep(0.5)  # let the readers take what is still on its way
            reader.stdin.write("stop\n")
            reader.stdin.flush()
            stats = json.loads(child_line(reader, "reader child", 30))
            finish(reader)
            events = sorted(st["events"] for st in stats)
            beats = sorted(st["beats"] for st in stats)
            extra["events"] = (events[0], statistics.median(events), events[-1])
            extra["beats"] = (beats[0], statistics.median(beats), beats[-1])
            extra["newest"] = sum(1 for st in stats if st["last_id"] == last_generation)
            extra["closed_early"] = sum(1 for st in stats if st["closed"])
        else:
            # One stalled watcher reads at last: it should get what the kernel held, then the
            # newest event (not a backlog).
            w = watchers[0]
            w.setblocking(False)
            data, quiet_since, deadline = b"", time.monotonic(), time.monotonic() + 3
            while time.monotonic() < deadline and time.monotonic() - quiet_since < 0.3:
                try:
                    chunk = w.recv(262144)
                    if not chunk:
                        break
                    data += chunk
                    quiet_since = time.monotonic()
                except BlockingIOError:
                    time.sleep(0.01)
            ids = re.findall(rb"\nid: (\d+)\n", data)
            extra["drained_kb"] = len(data) / 1024
            extra["drained_events"] = data.count(b"event: attributes")
            extra["drained_newest"] = bool(ids) and int(ids[-1]) == last_generation
            for w in watchers:
                w.close()
        time.sleep(5.0)
        after_close = d.rss_mb()
        d.stop()
        if d.proc.returncode not in (0, -signal.SIGTERM):
            raise RuntimeError("geoattrd (%s) exited with %d:\n%s" % (name, d.proc.returncode, d.log_tail()))
        return dict(idle=idle, with_watchers=with_watchers, peak=peak, end=end, after_close=after_close,
                    taken=taken, cpu=cpu, **extra)
    finally:
        d.stop()


def print_figure1(args, name, r):
    print("  %s watchers: idle %.1f MB, with %d watchers %.1f MB, peak %.1f MB, end %.1f MB, "
          "5 s after close %.1f MB" % (name, r["idle"], args.watchers, r["with_watchers"], r["peak"], r["end"],
                                       r["after_close"]))
    print("  %s watchers: peak - idle %+.1f MB, after close - idle %+.1f MB; %d refreshes in %.2f s "
          "(%.0f heartbeat intervals), daemon CPU %.2f s" % (
              name, r["peak"] - r["idle"], r["after_close"] - r["idle"], args.refreshes, r["taken"],
              r["taken"] / args.heartbeat, r["cpu"]))
    if "events" in r:
        print("  %s watchers: events received per watcher min/median/max %d/%d/%d of %d; heartbeats %d/%d/%d; "
              "%d of %d ended on the newest generation; %d closed by the daemon" % (
                  name, *r["events"], args.refreshes + 1, *r["beats"], r["newest"], args.watchers,
                  r["closed_early"]))
    if "drained_kb" in r:
        print("  %s watchers: one drained after the run got %.1f KB, %d events (of %d made), "
              "last one the newest generation: %s" % (
                  name, r["drained_kb"], r["drained_events"], args.refreshes + 1,
                  "yes" if r["drained_newest"] else "no"))


# --- figure 2 ------------------------------------------------------------------------------

def percentiles(lat):
    lat = sorted(x * 1000 for x in lat)
    pick = lambda q: lat[max(0, math.ceil(q * len(lat)) - 1)]
    return pick(0.50), pick(0.99), lat[-1]


def uid_b_loop(args, d, what):
    p = as_uid(args.uid_b, LOOP_CHILD, d.sock, args.requests)
    out = json.loads(child_line(p, "uid %d loop (%s)" % (args.uid_b, what), 60))
    finish(p)
    if out["bad"]:
        raise RuntimeError("uid %d loop (%s): answers other than 200: %s" % (args.uid_b, what, out["bad"]))
    return percentiles(out["latencies"])


def figure2(args, work):
    d = Daemon(args.binary, work, args.heartbeat, args.per_uid, "fig2")
    try:
        d.warm_up_and_settle()
        before = uid_b_loop(args, d, "before uid A holds its cap")
        holder = as_uid(args.uid_a, HOLDER_CHILD, d.sock, args.per_uid)
        first = json.loads(child_line(holder, "uid %d holder" % args.uid_a, 30))
        if "error" in first:
            raise RuntimeError("uid %d holder: %s" % (args.uid_a, first["error"]))
        during = uid_b_loop(args, d, "while uid A holds its cap")
        holder.stdin.write("probe\n")
        holder.stdin.flush()
        again = json.loads(child_line(holder, "uid %d holder" % args.uid_a, 30))
        holder.stdin.write("stop\n")
        holder.stdin.flush()
        still = json.loads(child_line(holder, "uid %d holder" % args.uid_a, 30))["still_served"]
        finish(holder)
        return dict(before=before, during=during, held=first["held"], extra=first["extra"],
                    extra_after=again["extra"], still=still)
    finally:
        d.stop()


def refused_ok(probe):
    return probe["status"] == 503 and probe["error"] == "too_many_connections"


# --- main ----------------------------------------------------------------------------------

def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", default=os.path.join(ROOT, ".build/release/geoattrd"),
                        help="the daemon (default: .build/release/geoattrd in the checkout)")
    parser.add_argument("--watchers", type=int, default=200)
    parser.add_argument("--refreshes", type=int, default=2000)
    parser.add_argument("--heartbeat", type=float, default=0.05, help="api.heartbeat_s (>= 0.05)")
    parser.add_argument("--run-seconds", type=float, default=None,
                        help="how long the refreshes are spread over (default: 60 heartbeat intervals, at least 3 s)")
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--per-uid", type=int, default=64, help="api.max_connections_per_uid")
    parser.add_argument("--uid-a", type=int, default=61001)
    parser.add_argument("--uid-b", type=int, default=61002)
    parser.add_argument("--near-mb", type=float, default=5.0,
                        help="how close to idle the RSS must be 5 s after the watchers close (default 5 MB)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory (daemon logs)")
    args = parser.parse_args()
    args.binary = os.path.abspath(args.binary)
    if args.run_seconds is None:
        args.run_seconds = max(3.0, 60 * args.heartbeat)
    if os.geteuid() != 0:
        raise SystemExit("run as root (the uid children are started with setpriv)")
    if not os.access(args.binary, os.X_OK):
        raise SystemExit("no daemon at %s; build it with `swift build -c release --product geoattrd`" % args.binary)

    # Bounded: the whole run takes well under 2 minutes; a hang ends it here, cleaned up.
    def on_signal(signum, frame):
        raise SystemExit("stopped by signal %d" % signum)
    def on_alarm(signum, frame):
        raise RuntimeError("the benchmark took longer than 150 s")
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGHUP, on_signal)
    signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(150)

    work = tempfile.mkdtemp(prefix="bench-clients-")
    os.chmod(work, 0o755)  # uid A and uid B traverse it to the socket
    status = 0
    started = time.monotonic()
    try:
        print("geoattrd client benchmark: %s" % args.binary)
        print("  built %s; %d CPUs; heartbeat_s %g; max_connections_per_uid %d" % (
            time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(os.stat(args.binary).st_mtime)),
            os.cpu_count(), args.heartbeat, args.per_uid))
        print("figure 1: %d watchers (SO_RCVBUF %d), %d refreshes (POST /v1/refresh?wait=5, one keep-alive "
              "connection) over %.1f s, RSS sampled every 100 ms" % (
                  args.watchers, RCVBUF, args.refreshes, args.run_seconds))
        stalled = figure1_case(args, work, reading=False)
        print_figure1(args, "stalled", stalled)
        reading = figure1_case(args, work, reading=True)
        print_figure1(args, "reading", reading)

        print("figure 2: uid %d holds %d connections (keep-alive, idle after one GET /v1/attributes each); "
              "uid %d does %d sequential GET /v1/attributes, each on a fresh connection (connect to EOF)" % (
                  args.uid_a, args.per_uid, args.uid_b, args.requests))
        f2 = figure2(args, work)
        print("  uid %d: %d connections held; connection %d answered %s %s; again after uid %d's loop: %s %s; "
              "%d of %d held connections still served at the end" % (
                  args.uid_a, f2["held"], args.per_uid + 1, f2["extra"]["status"], f2["extra"]["error"],
                  args.uid_b, f2["extra_after"]["status"], f2["extra_after"]["error"], f2["still"], f2["held"]))
        print("  uid %d latency before uid %d holds its cap:  p50 %.2f ms  p99 %.2f ms  max %.2f ms" % (
            args.uid_b, args.uid_a, *f2["before"]))
        print("  uid %d latency while uid %d holds its cap:   p50 %.2f ms  p99 %.2f ms  max %.2f ms" % (
            args.uid_b, args.uid_a, *f2["during"]))

        verdict = lambda ok: "met" if ok else "NOT met"
        print("summary (%.0f s):" % (time.monotonic() - started))
        for name, r in (("stalled", stalled), ("reading", reading)):
            print("  %s watchers: peak - idle %+.1f MB (target <= 10 MB: %s); after close - idle %+.1f MB "
                  "(target <= %.0f MB: %s)" % (
                      name, r["peak"] - r["idle"], verdict(r["peak"] - r["idle"] <= 10),
                      r["after_close"] - r["idle"], args.near_mb, verdict(r["after_close"] - r["idle"] <= args.near_mb)))
        print("  uid %d over its cap refused with 503 too_many_connections: %s" % (
            args.uid_a, verdict(refused_ok(f2["extra"]) and refused_ok(f2["extra_after"]))))
        print("  uid %d p99 with uid %d holding its cap %.2f ms (before: %.2f ms; target < 10 ms: %s)" % (
            args.uid_b, args.uid_a, f2["during"][1], f2["before"][1], verdict(f2["during"][1] < 10)))
    except StartError as e:
        print("error: %s" % e, file=sys.stderr)
        status = 2
    except (Exception, SystemExit) as e:
        if not isinstance(e, SystemExit):
            traceback.print_exc()
        print("error: %s: %s" % (type(e).__name__, e), file=sys.stderr)
        status = 1
    finally:
        signal.alarm(0)
        kill_all()
        if args.keep:
            print("kept %s" % work)
        else:
            shutil.rmtree(work, ignore_errors=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
