#!/usr/bin/env python3
"""Measures the daemon's targets on a release build:

  start   from exec to the persisted cache being served (the "serving the cached result" log
          line, written when the result is in the attribute store), and to "scheduler started";
  idle    CPU time and context switches (wake-ups) over --idle-seconds in the foreground with a
          fresh cache: nothing should run but the next deadline;
  memory  resident (VmRSS) and private memory (Private_* in smaps_rollup) while idle, with the
          world index open (cache/geodata/world.gidx, or --index).

It uses a static location (gpsd disabled) to write the cache, so it needs no gpsd.
Usage: Benchmarks/daemon/bench-daemon.py [--binary PATH] [--runs N] [--idle-seconds S]
       (default binary: .build/release/geoattrd; build it with `swift build -c release`)
"""
import argparse, os, statistics, subprocess, tempfile, time

from daemonbench import connect, cpu_seconds, request, status_mb

def context_switches(pid):
    total = 0
    for tid in os.listdir("/proc/%d/task" % pid):
        with open("/proc/%d/task/%s/status" % (pid, tid)) as f:
            for line in f:
                if line.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")):
                    total += int(line.split()[1])
    return total

def memory(pid):
    values = status_mb(pid)
    return values.get("VmRSS", 0), values.get("RssAnon", 0), values.get("RssFile", 0)

def served_over_socket(path, deadline):
    # GET /v1/attributes until it answers 200: the first attributes a client can get.
    while time.monotonic() < deadline:
        try:
            s = connect(path)
            try:
                status, _, _ = request(s, "GET", "/v1/attributes", close=True)
            finally:
                s.close()
            if status == 200:
                return True
        except OSError:
            pass
        time.sleep(0.001)
    return False

def wait_for(path, text, timeout=20):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with open(path) as f:
                for line in f:
                    if text in line:
                        return line
        except FileNotFoundError:
            pass
        time.sleep(0.002)
    raise SystemExit("timed out waiting for %r in %s" % (text, path))

def main():
    parser = argparse.ArgumentParser()
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    parser.add_argument("--binary", default=os.path.join(root, ".build/release/geoattrd"))
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--idle-seconds", type=float, default=60)
    parser.add_argument("--index", default=os.path.join(root, "cache/geodata/world.gidx"),
                        help="geocoder index the daemon opens (default: the world index the set-up built)")
    args = parser.parse_args()
    work = tempfile.mkdtemp()
    config = os.path.join(work, "geoattrd.yaml")
    with open(config, "w") as f:
        f.write("gpsd:\n  enabled: false\nstatic:\n  latitude: 47.3769\n  longitude: 8.5417\n")
    common = [args.binary, "--config", config, "--state-dir", work, "--state-file", os.path.join(work, "state"),
              "--socket", os.path.join(work, "api.sock")]
    if os.path.exists(args.index):
        common += ["--index", args.index]
    else:
        print("no index at %s: measuring without one" % args.index)

    # Write the cache once.
    log = os.path.join(work, "first.log")
    with open(log, "w") as out:
        proc = subprocess.Popen(common + ["--log-level", "debug"], stderr=out)
    wait_for(log, "cache written")
    proc.terminate()
    proc.wait()

    served, started = [], []
    socket_path = os.path.join(work, "api.sock")
    for run in range(args.runs):
        log = os.path.join(work, "run%d.log" % run)
        with open(log, "w") as out:
            t0 = time.monotonic()
            proc = subprocess.Popen(common, stderr=out)
            if not served_over_socket(socket_path, t0 + 20):
                raise SystemExit("no attributes over the socket within 20 s")
            served.append((time.monotonic() - t0) * 1000)
            wait_for(log, "scheduler started")
            started.append((time.monotonic() - t0) * 1000)
        proc.terminate()
        proc.wait()
    print("start -> persisted attributes served over the socket (ms): p50 %.1f  min %.1f  max %.1f  (%d runs)" % (
        statistics.median(served), min(served), max(served), len(served)))

    log = os.path.join(work, "idle.log")
    with open(log, "w") as out:
        proc = subprocess.Popen(common, stderr=out)
    wait_for(log, "scheduler started")
    time.sleep(2)
    cpu0, switches0 = cpu_seconds(proc.pid), context_switches(proc.pid)
    rss, anon, filebacked = memory(proc.pid)
    time.sleep(args.idle_seconds)
    cpu1, switches1 = cpu_seconds(proc.pid), context_switches(proc.pid)
    rss1, anon1, _ = memory(proc.pid)
    threads = len(os.listdir("/proc/%d/task" % proc.pid))
    proc.terminate()
    proc.wait()
    print("idle %.0f s in the foreground, fresh cache: CPU %.1f ms, %d context switches (all threads), %d threads" % (
        args.idle_seconds, (cpu1 - cpu0) * 1000, switches1 - switches0, threads))
    print("memory while idle: VmRSS %.1f MB = anonymous %.1f MB + file-backed %.1f MB (after %.0f s: %.1f / %.1f MB)" % (
        rss, anon, filebacked, args.idle_seconds, rss1, anon1))

if __name__ == "__main__":
    main()
