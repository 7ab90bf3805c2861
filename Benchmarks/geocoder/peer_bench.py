"""The same workload through the peer, PyPI reverse_geocoder 1.5.1 (k-d tree over GeoNames
cities1000), single process (mode=1), as Benchmarks/geocoder/bench.sh runs geoindex.

usage: peer_bench.py POINTS.csv OUT.jsonl
"""
import json
import sys
import time


def rss_kb():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return -1


def main():
    points_path, out_path = sys.argv[1], sys.argv[2]
    before = rss_kb()
    t0 = time.time()
    import reverse_geocoder as rg
    geo = rg.RGeocoder(mode=1, verbose=False)
    load = time.time() - t0
    after = rss_kb()
    print(f"peer load: {load:.2f} s, +{(after - before) / 1024:.0f} MB resident")

    pts = []
    with open(points_path) as f:
        for line in f:
            la, lo = line.split(",")
            pts.append((float(la), float(lo)))
    single = []
    for p in pts[:20000]:
        t = time.perf_counter()
        geo.query([p])
        single.append(time.perf_counter() - t)
    single.sort()
    print(f"peer single query: p50 {single[len(single) // 2] * 1e6:.1f} us, p99 {single[len(single) * 99 // 100] * 1e6:.1f} us")
    t = time.time()
    geo.query(pts)
    bulk = time.time() - t
    print(f"peer bulk query: {len(pts) / bulk:,.0f} points/s ({len(pts)} in {bulk:.2f} s)")

    # End to end like `lookup --batch`: read lines, answer, write one JSON object per line.
    t = time.time()
    with open(points_path) as f:
        pts = [tuple(map(float, line.split(","))) for line in f]
    res = geo.query(pts)
    with open(out_path, "w") as out:
        for p, r in zip(pts, res):
            out.write(json.dumps({"lat": p[0], "lon": p[1], "cc": r["cc"], "admin1": r["admin1"], "name": r["name"]}) + "\n")
    e2e = time.time() - t
    print(f"peer batch end to end: {len(pts) / e2e:,.0f} lines/s ({len(pts)} lines in {e2e:.2f} s, load excluded)")


if __name__ == "__main__":
    main()
