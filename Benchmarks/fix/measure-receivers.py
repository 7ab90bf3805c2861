#!/usr/bin/env python3
"""One-shot fixes (`geoattrctl fix`) against real receiver recordings replayed by gpsfake.

For each NAME.log in DIR it replays the recording with gpsfake, as the regression oracles were
made (`gpsfake -1 -p -q -s 38400 -P PORT -c CYCLE NAME.log`: pipe mode, so gpsfake's own watcher
opens the device and prints every report; one play; a free port and a private TMPDIR per replay),
and runs `geoattrctl fix --gpsd 127.0.0.1:PORT --timeout S` against it, N times, one replay per
run, one replay at a time.

Where a session starts in the recording decides its first report, so each run starts the client
at a different point: after gpsfake's watcher has seen K reports (TPVs), plus a phase of
U x 2 x CYCLE seconds. The K of the N runs are spread over 0 .. TPVs-4 (stratified: run i draws
from the i-th Nth of that range) and U is uniform in [0, 1), both from --seed, so a later run of
this script with the same seed and recordings starts its clients at the same points. K = 0 starts
the client before the replay's first byte (the client then waits for gpsfake's 1.4 s start-up
sleep too, like a session that opens the receiver).

Per recording it prints each run (start point, exit code, mode, error_m, time_to_fix_ms, which
report of the recording was accepted and the first report of the recording, after that one,
with an error estimate (eph, else the radial epx/epy) of 100 m or less), then a summary: runs,
fixes (exit 0), fixes with a non-null error_m, the modes, the exit codes of the failures, the
median and maximum time_to_fix_ms. At the end, the share of fixes with an error estimate over
all recordings, and the median/maximum time to fix over all fixes.

The accepted report is identified in the live replay (gpsfake's watcher sees the same reports
as the client, timestamped here) by mode, position and error, nearest to when the client
printed; its index is then looked up in NAME.gpsd-3.22.jsonl (the same sequence of TPVs when
the live replay matches it, which is checked and reported).

Usage: Benchmarks/fix/measure-receivers.py DIR [--runs N] [--geoattrctl PATH] [--timeout S]
                                              [--cycle S] [--seed N] [--json FILE]
       (default binary: .build/debug/geoattrctl; Python 3 standard library only; needs gpsfake)
"""
import argparse, glob, json, math, os, random, shutil, signal, socket, statistics, subprocess
import tempfile, threading, time
from collections import Counter

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GOOD_ERROR_M = 100.0    # an "estimate of 100 m or less" (the default --max-error)
NO_DOP_ERROR_M = 1899.0  # gpsd's placeholder eph when the DOP is unknown (HDOP 99.99 x 19)


def estimate(tpv):
    """The report's horizontal error estimate as the fix engine reads it: eph, else epx/epy."""
    if tpv.get("eph") is not None:
        return float(tpv["eph"])
    if tpv.get("epx") is not None and tpv.get("epy") is not None:
        return math.hypot(float(tpv["epx"]), float(tpv["epy"]))
    return None


def good_estimate(tpv):
    """An estimate of 100 m or less: eph, or the epx/epy pair."""
    values = []
    if tpv.get("eph") is not None:
        values.append(float(tpv["eph"]))
    if tpv.get("epx") is not None and tpv.get("epy") is not None:
        values.append(math.hypot(float(tpv["epx"]), float(tpv["epy"])))
    good = [v for v in values if v <= GOOD_ERROR_M]
    return min(good) if good else None


def tpvs_of(lines):
    out = []
    for line in lines:
        line = line.strip()
        if not line.startswith("{") or '"class":"TPV"' not in line:
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if obj.get("class") == "TPV":
            out.append(obj)
    return out


def describe(tpv):
    e = estimate(tpv)
    return "%d%s" % (tpv.get("mode", 0), "" if e is None else ":%.4gm" % e)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def stratified_starts(rng, runs, tpv_count):
    """K (reports seen before the client starts) and U (phase) for each run."""
    top = max(0, tpv_count - 4)
    starts = []
    for i in range(runs):
        lo = top * i / runs
        hi = top * (i + 1) / runs
        k = min(top, int(math.floor(lo + rng.random() * (hi - lo) + 0.5)))
        starts.append((k, rng.random()))
    return starts


class Replay:
    """One gpsfake -1 -p replay, with its watcher's reports timestamped as they arrive."""

    def __init__(self, log, cycle, workdir):
        self.lines = []          # (monotonic seconds, text)
        self.tpv_times = []      # (monotonic seconds, TPV object)
        self.cond = threading.Condition()
        self.done = False
        self.log = log
        for attempt in range(5):
            self.port = free_port()
            self.tmp = tempfile.mkdtemp(prefix="gpsfake-", dir=workdir)
            env = dict(os.environ, TMPDIR=self.tmp, PYTHONUNBUFFERED="1")
            cmd = ["gpsfake", "-1", "-p", "-q", "-s", "38400", "-P", str(self.port)]
            if cycle > 0:
                cmd += ["-c", str(cycle)]
            cmd.append(log)
            self.cmd = cmd
            self.stderr = open(os.path.join(self.tmp, "stderr"), "w+b")
            self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                         stderr=self.stderr, env=env, start_new_session=True)
            self.started = time.monotonic()
            threading.Thread(target=self._read, daemon=True).start()
            if self._wait_listening(10.0):
                return
            self.stop()
        raise RuntimeError("gpsfake did not start: %s" % " ".join(self.cmd))

    def _read(self):
        for raw in self.proc.stdout:
            now = time.monotonic()
            text = raw.decode(errors="replace")
            with self.cond:
                self.lines.append((now, text))
                for tpv in tpvs_of([text]):
                    self.tpv_times.append((now, tpv))
                self.cond.notify_all()
        with self.cond:
            self.done = True
            self.cond.notify_all()

    def _wait_listening(self, limit):
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return False
            # The port must be our gpsd's: our gpsfake alive, with its control socket in our TMPDIR
            # (a gpsd of someone else's that took the port would answer too; then ours exits 1).
            if glob.glob(os.path.join(self.tmp, "gpsfake-*.sock")):
                try:
                    socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                    time.sleep(0.05)
                    return self.proc.poll() is None
                except OSError:
                    pass
            time.sleep(0.03)
        return False

    def wait_tpvs(self, count, limit):
        deadline = time.monotonic() + limit
        with self.cond:
            while len(self.tpv_times) < count and not self.done:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self.cond.wait(left)
            return len(self.tpv_times)

    def wait_done(self, limit):
        deadline = time.monotonic() + limit
        with self.cond:
            while not self.done:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self.cond.wait(left)
        return True

    def stop(self):
        # gpsfake's SIGTERM handler stops its gpsd; it may hang writing to the pty: then the group.
        if self.proc.poll() is None:
            try:
                self.proc.send_signal(signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                self.proc.wait(2.0)
            except subprocess.TimeoutExpired:
                pass
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)  # its own session: gpsd and gpsfake only
        except (ProcessLookupError, PermissionError):
            pass
        try:
            self.proc.wait(5.0)
        except subprocess.TimeoutExpired:
            pass
        self.stderr.close()
        shutil.rmtree(self.tmp, ignore_errors=True)


def same_position(tpv, fix):
    try:
        return (tpv.get("mode") == fix.get("mode")
                and abs(float(tpv["lat"]) - float(fix["lat"])) < 1e-6
                and abs(float(tpv["lon"]) - float(fix["lon"])) < 1e-6)
    except (KeyError, TypeError, ValueError):
        return False


def same_error(tpv, fix):
    e, f = estimate(tpv), fix.get("error_m")
    if e is not None and e >= NO_DOP_ERROR_M:
        e = None
    if f is None:
        return True  # also a report whose estimate was set aside (deferral rules, placeholder)
    return e is not None and abs(e - float(f)) < 0.05


def locate(fix, live, printed_at, first_possible):
    """Index (0-based) in the live replay of the report the client accepted, or None.

    The client cannot have had a report the watcher had printed before the client started
    (first_possible); of the rest, the copy nearest to when the client printed (the watcher
    reads through gpsfake, which also sleeps between packets, so its copy can be late)."""
    candidates = [i for i, (_, tpv) in enumerate(live) if same_position(tpv, fix) and same_error(tpv, fix)]
    later = [i for i in candidates if i >= first_possible]
    if not (later or candidates):
        return None
    return min(later or candidates, key=lambda i: abs(live[i][0] - printed_at))


def matches_oracle(live_tpvs, oracle):
    """The live replay is the oracle's sequence of reports, or a prefix of it (stopped early)."""
    return len(live_tpvs) <= len(oracle) and all(
        a.get("mode") == b.get("mode") and a.get("lat") == b.get("lat") and a.get("lon") == b.get("lon")
        and estimate(a) == estimate(b) for a, b in zip(live_tpvs, oracle))


def map_to_oracle(index, live_tpvs, oracle):
    if index is None or not oracle:
        return None
    if matches_oracle(live_tpvs, oracle):
        return index
    tpv = live_tpvs[index]
    same = [j for j, o in enumerate(oracle) if o.get("mode") == tpv.get("mode")
            and o.get("lat") == tpv.get("lat") and o.get("lon") == tpv.get("lon") and estimate(o) == estimate(tpv)]
    return min(same, key=lambda j: abs(j - index)) if same else None


def ms(values):
    return "%.1f / %.1f" % (statistics.median(values), max(values)) if values else "- / -"


def counter_text(counter, fmt="%s"):
    return ", ".join(("%s x%d" % (fmt % k, n)) for k, n in sorted(counter.items())) or "-"


def run_recording(log, args, rng, workdir):
    name = os.path.basename(log)[:-4]
    oracle_path = os.path.join(os.path.dirname(log), name + ".gpsd-3.22.jsonl")
    oracle = tpvs_of(open(oracle_path, errors="replace")) if os.path.exists(oracle_path) else []
    tpv_count = len(oracle)
    if not tpv_count:  # no oracle: count this replay's reports once
        replay = Replay(log, args.cycle, workdir)
        replay.wait_done(120)
        tpv_count = len(replay.tpv_times)
        replay.stop()
    starts = stratified_starts(rng, args.runs, tpv_count)
    print("== %s  (%d TPVs in %s: %s)" % (name, len(oracle), os.path.basename(oracle_path) if oracle else "no oracle",
                                          " ".join(describe(t) for t in oracle) if oracle else "-"))
    records = []
    for run, (k, u) in enumerate(starts):
        replay = Replay(log, args.cycle, workdir)
        try:
            if k > 0:
                replay.wait_tpvs(k, 60.0)
            time.sleep(u * 2 * args.cycle)
            with replay.cond:
                seen_at_start = len(replay.tpv_times)
            started = time.monotonic()
            cmd = [args.geoattrctl, "fix", "--gpsd", "127.0.0.1:%d" % replay.port, "--timeout", "%g" % args.timeout]
            if args.first_report_wait is not None:
                cmd += ["--first-report-wait", "%g" % args.first_report_wait]
            client = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            out = client.stdout.readline()
            printed_at = time.monotonic()
            try:
                _, err = client.communicate(timeout=args.timeout + 10)
            except subprocess.TimeoutExpired:
                client.kill()
                _, err = client.communicate()
            code = client.returncode
            ended = time.monotonic()
            gpsfake_exit = replay.proc.poll()
            # Wait for the watcher's copy of the accepted report (it lags by up to a packet).
            fix_out = None
            if code == 0:
                try:
                    fix_out = json.loads(out)
                except ValueError:
                    pass
            deadline = time.monotonic() + 2.0
            while fix_out and time.monotonic() < deadline:
                with replay.cond:
                    live = list(replay.tpv_times)
                    if replay.done:
                        break
                if any(i >= seen_at_start and t >= printed_at - 0.2 and same_position(tpv, fix_out) and same_error(tpv, fix_out)
                       for i, (t, tpv) in enumerate(live)):
                    time.sleep(0.25)
                    break
                time.sleep(0.02)
            with replay.cond:
                live = list(replay.tpv_times)
            gpsfake_stderr = ""
            if code != 0:
                time.sleep(0.1)
                replay.stderr.seek(0)
                gpsfake_stderr = replay.stderr.read().decode(errors="replace")
        finally:
            replay.stop()
        rec = {"recording": name, "run": run, "start_after_tpvs": k, "phase_s": round(u * 2 * args.cycle, 3),
               "tpvs_seen_at_start": seen_at_start, "client_start_s": round(started - replay.started, 3),
               "client_s": round(ended - started, 3), "gpsfake_running_at_client_exit": gpsfake_exit is None,
               "gpsfake_stderr": [l for l in gpsfake_stderr.splitlines() if "DBUS" not in l][-20:], "exit": code, "fix": None, "stderr": err.decode(errors="replace").strip(),
               "replay_tpvs": len(live), "replay_matches_oracle": None, "accepted_tpv": None,
               "accepted_report": None, "later_good_tpv": None, "later_good_error_m": None,
               "later_good_after_s": None, "next_report": None}
        if oracle:
            rec["replay_matches_oracle"] = matches_oracle([t for _, t in live], oracle)
        if code == 0:
            fix = fix_out
            rec["fix"] = fix
            if fix:
                idx = locate(fix, live, printed_at, seen_at_start)
                live_tpvs = [t for _, t in live]
                j = map_to_oracle(idx, live_tpvs, oracle)
                if j is not None:
                    rec["accepted_tpv"] = j + 1
                    rec["accepted_report"] = describe(oracle[j])
                    if j + 1 < len(oracle):
                        rec["next_report"] = describe(oracle[j + 1])
                    later = next((m for m in range(j + 1, len(oracle)) if good_estimate(oracle[m]) is not None), None)
                    if later is not None:
                        rec["later_good_tpv"] = later + 1
                        rec["later_good_error_m"] = good_estimate(oracle[later])
                        if rec["replay_matches_oracle"] and idx == j and later < len(live):
                            rec["later_good_after_s"] = round(live[later][0] - live[j][0], 3)
        records.append(rec)
        print_run(rec)
    summarize(name, records)
    return records


def print_run(rec):
    fix = rec["fix"]
    head = "  run %d: start after TPV %2d +%.2fs (%.2fs into the replay) exit %d" % (
        rec["run"], rec["start_after_tpvs"], rec["phase_s"], rec["client_start_s"], rec["exit"])
    if fix is None:
        print("%s after %.2fs, %s; %d of the recording's reports replayed (%s)" % (
            head, rec["client_s"], "gpsfake still running" if rec["gpsfake_running_at_client_exit"] else "gpsfake had ended",
            rec["replay_tpvs"], rec["stderr"].splitlines()[-1] if rec["stderr"] else "no output"))
        for line in rec["gpsfake_stderr"][-3:]:
            print("    gpsfake: " + line)
        return
    err = "null" if fix.get("error_m") is None else "%.4g" % fix["error_m"]
    acc = ("TPV #%d [%s]" % (rec["accepted_tpv"], rec["accepted_report"])) if rec["accepted_tpv"] else "TPV ?"
    if rec["later_good_tpv"]:
        later = "first <=100 m estimate after it: TPV #%d (%.4g m%s)" % (
            rec["later_good_tpv"], rec["later_good_error_m"],
            ", +%.2fs in this replay" % rec["later_good_after_s"] if rec["later_good_after_s"] is not None else "")
    elif rec["accepted_tpv"]:
        later = "no <=100 m estimate after it"
    else:
        later = "not located in the oracle"
    nxt = (", next [%s]" % rec["next_report"]) if rec["next_report"] else (", last report" if rec["accepted_tpv"] else "")
    print("%s mode %s error_m %s ttf %.1f ms; %s%s; %s" % (head, fix.get("mode"), err, fix.get("time_to_fix_ms") or float("nan"),
                                                          acc, nxt, later))


def summarize(name, records):
    fixes = [r for r in records if r["fix"]]
    with_error = [r for r in fixes if r["fix"].get("error_m") is not None]
    ttf = [r["fix"]["time_to_fix_ms"] for r in fixes if r["fix"].get("time_to_fix_ms") is not None]
    modes = Counter("%dD" % r["fix"]["mode"] for r in fixes)
    failures = Counter(r["exit"] for r in records if r["exit"] != 0)
    not_good = [r for r in fixes if r["fix"].get("error_m") is None or r["fix"]["error_m"] > GOOD_ERROR_M]
    missed = [r for r in not_good if r["later_good_tpv"]]
    next_good = [r for r in missed if r["later_good_tpv"] == r["accepted_tpv"] + 1]
    unlocated = [r for r in fixes if not r["accepted_tpv"]]
    mismatched = [r for r in records if r["replay_matches_oracle"] is False]
    print("  %s: runs %d, fixes %d, with error_m %d, modes %s, failures %s, time_to_fix_ms median/max %s" % (
        name, len(records), len(fixes), len(with_error), counter_text(modes), counter_text(failures, "exit %s"), ms(ttf)))
    print("  %s: fixes without a <=100 m error_m but with a <=100 m estimate later in the recording: %d of %d"
          " (in the very next report: %d)%s%s" % (
              name, len(missed), len(not_good), len(next_good),
              "; fixes not located in the oracle: %d" % len(unlocated) if unlocated else "",
              "; replays differing from the oracle: %d" % len(mismatched) if mismatched else ""))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dir", help="directory of NAME.log recordings (and NAME.gpsd-3.22.jsonl oracles)")
    parser.add_argument("--runs", type=int, default=5, help="runs per recording (default 5)")
    parser.add_argument("--geoattrctl", default=os.path.join(ROOT, ".build", "debug", "geoattrctl"))
    parser.add_argument("--timeout", type=float, default=15.0, help="geoattrctl fix --timeout (default 15)")
    parser.add_argument("--cycle", type=float, default=0.1, help="gpsfake -c: seconds between sentences/packets (default 0.1)")
    parser.add_argument("--seed", type=int, default=1, help="start points of the clients (default 1)")
    parser.add_argument("--json", help="also write every run as JSON to this file")
    parser.add_argument("--first-report-wait", type=float, default=None,
                        help="geoattrctl fix --first-report-wait (default: its own, 1 s; 0: no wait)")
    args = parser.parse_args()
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    if not os.access(args.geoattrctl, os.X_OK):
        parser.error("no executable geoattrctl at %s" % args.geoattrctl)
    if shutil.which("gpsfake") is None:
        parser.error("gpsfake not found (apt-get install gpsd gpsd-clients)")
    logs = sorted(glob.glob(os.path.join(args.dir, "*.log")))
    if not logs:
        parser.error("no *.log in %s" % args.dir)

    began = time.monotonic()
    print("geoattrctl %s; gpsfake -1 -p -q -s 38400 -c %g; %d runs per recording, --timeout %g, seed %d" % (
        args.geoattrctl, args.cycle, args.runs, args.timeout, args.seed))
    workdir = tempfile.mkdtemp(prefix="measure-receivers-")
    records = []
    try:
        for n, log in enumerate(logs):
            rng = random.Random("%d/%s" % (args.seed, os.path.basename(log)))  # per recording: adding one changes no other
            records += run_recording(log, args, rng, workdir)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)

    fixes = [r for r in records if r["fix"]]
    with_error = [r for r in fixes if r["fix"].get("error_m") is not None]
    ttf = [r["fix"]["time_to_fix_ms"] for r in fixes if r["fix"].get("time_to_fix_ms") is not None]
    print("== overall (%d recordings)" % len(logs))
    print("  runs %d, fixes %d, failures %s" % (len(records), len(fixes), counter_text(Counter(r["exit"] for r in records if r["exit"] != 0), "exit %s")))
    if fixes:
        print("  fixes with an error estimate: %d of %d = %.0f%%" % (len(with_error), len(fixes), 100.0 * len(with_error) / len(fixes)))
    not_good = [r for r in fixes if r["fix"].get("error_m") is None or r["fix"]["error_m"] > GOOD_ERROR_M]
    missed = [r for r in not_good if r["later_good_tpv"]]
    print("  fixes without a <=100 m error_m whose recording has a <=100 m estimate later: %d of %d" % (len(missed), len(not_good)))
    print("  time_to_fix_ms over all fixes: median %s, max %s" % (
        "%.1f" % statistics.median(ttf) if ttf else "-", "%.1f" % max(ttf) if ttf else "-"))
    print("  elapsed %.0f s" % (time.monotonic() - began))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"geoattrctl": args.geoattrctl, "cycle": args.cycle, "runs": args.runs, "timeout": args.timeout,
                       "seed": args.seed, "records": records}, f, indent=1)


if __name__ == "__main__":
    main()
