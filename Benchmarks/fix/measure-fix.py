#!/usr/bin/env python3
"""Measures geoattrctl fix against gpsd (gpsfake) as gpsd itself sees it.

For each run it takes gpsd's debug log (-D 4, every client exchange, timestamped here as the
lines arrive) and reports:
  release   from gpsd writing the accepted TPV to our client, to gpsd seeing that client hang up
            (the battery contract: the watch must not outlive the accepted fix by > 50 ms);
  overhead  from gpsd writing the accepted TPV, to geoattrctl printing the fix;
  cadence   the interval between TPV reports (what a one-shot client waits for, on average half);
  ttf       geoattrctl's own time_to_fix_ms (connect to accepted report).
Usage: Benchmarks/fix/measure-fix.py [--runs N] [--cycle SECONDS] [--first-report-wait SECONDS]   (after `swift build`)
"""
import argparse, json, os, random, re, socket, subprocess, sys, tempfile, threading, time

def checksum(body):
    c = 0
    for ch in body:
        c ^= ord(ch)
    return "$%s*%02X\r\n" % (body, c)

def track(epochs=400):
    out = []
    for i in range(epochs):
        t = "%02d%02d%02d.00" % (12 + i // 3600, (i // 60) % 60, i % 60)
        out.append(checksum("GPGGA,%s,4851.502206,N,00217.668878,E,1,08,1.2,50.0,M,47.0,M,," % t))
        out.append(checksum("GPGSA,A,3,01,02,03,04,05,06,07,08,,,,,2.0,1.2,1.5"))
        out.append(checksum("GPRMC,%s,A,4851.502206,N,00217.668878,E,0.0,0.0,211126,,,A" % t))
    return "".join(out)

def free_port():
    for _ in range(200):
        port = random.randrange(20000, 32000)
        s = socket.socket()
        try:
            s.bind(("127.0.0.1", port))
            return port
        except OSError:
            pass
        finally:
            s.close()
    raise SystemExit("no free port")

def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]

def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--cycle", type=float, default=0.05)
    parser.add_argument("--first-report-wait", type=float, default=None,
                        help="passed to geoattrctl fix (default: its own, 1 s; 0: no wait)")
    args = parser.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    binpath = subprocess.run(["swift", "build", "--show-bin-path"], cwd=root, capture_output=True, text=True).stdout.strip()
    geoattrctl = os.path.join(binpath, "geoattrctl")

    work = tempfile.mkdtemp()
    log_path = os.path.join(work, "track.nmea")
    open(log_path, "w", newline="").write(track())
    port = free_port()
    env = dict(os.environ, TMPDIR=work)
    gpsfake = subprocess.Popen(["gpsfake", "-p", "-q", "-D", "4", "-P", str(port), "-c", str(args.cycle), log_path],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, start_new_session=True)
    lines = []
    def reader():
        for raw in gpsfake.stderr:
            lines.append((time.monotonic_ns(), raw.decode(errors="replace")))
    threading.Thread(target=reader, daemon=True).start()
    try:
        for _ in range(400):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.05)
        time.sleep(2.0)  # let gpsfake's own watcher start the replay
        releases, overheads, ttfs = [], [], []
        for run in range(args.runs):
            start_index = len(lines)
            wait = [] if args.first_report_wait is None else ["--first-report-wait", str(args.first_report_wait)]
            proc = subprocess.Popen([geoattrctl, "fix", "--gpsd", "127.0.0.1:%d" % port, "--timeout", "20"] + wait,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            out = proc.stdout.readline()
            printed = time.monotonic_ns()
            proc.wait()
            if proc.returncode != 0:
                print("run %d failed: %s" % (run, proc.stderr.read().decode()), file=sys.stderr)
                continue
            ttfs.append(json.loads(out)["time_to_fix_ms"])
            time.sleep(0.3)
            window = lines[start_index:]
            client = None
            for _, text in window:
                m = re.search(r"<= client\((\d+)\): \?WATCH=\{\"enable\":true,\"json\":true\}", text)
                if m:
                    client = m.group(1)
                    break
            gone = next((t for t, text in window if client and (("client(%s): eof read" % client) in text
                         or ("client(%s) write:" % client) in text
                         or ("detaching" in text and "(sub %s," % client in text))), None)
            # gpsd may write several objects in one line ("{SKY...}\r\n{TPV...}").
            tpv = [t for t, text in window if client and ("=> client(%s): " % client) in text
                   and '{"class":"TPV"' in text and (gone is None or t <= gone)]
            if not tpv or gone is None:
                print("run %d: could not find the accepted TPV or the hang-up in gpsd's log" % run, file=sys.stderr)
                continue
            releases.append((gone - tpv[-1]) / 1e6)
            overheads.append((printed - tpv[-1]) / 1e6)
        watcher = [t for t, text in lines if "=> client(0): " in text and '{"class":"TPV"' in text]
        cadence = [(b - a) / 1e6 for a, b in zip(watcher, watcher[1:])]
        print("runs: %d of %d measured (gpsfake -c %s)" % (len(releases), args.runs, args.cycle))
        for name, values in (("release (TPV written -> client gone), ms", releases),
                             ("overhead (TPV written -> fix printed), ms", overheads),
                             ("time_to_fix_ms (connect -> accepted TPV)", ttfs),
                             ("TPV cadence, ms", cadence)):
            if values:
                print("%-44s p50 %8.2f  p95 %8.2f  max %8.2f" % (name, percentile(values, 50), percentile(values, 95), max(values)))
    finally:
        try:
            os.killpg(gpsfake.pid, 15)
            time.sleep(0.5)
            os.killpg(gpsfake.pid, 9)
        except ProcessLookupError:
            pass
        gpsfake.wait()

if __name__ == "__main__":
    main()
