"""Accuracy harness: truth points derived at run time, scored for geoindex and for the peer.

Truth (none of it hand-typed; fixed seed, so runs are repeatable):
  inside   GeoNames places jittered by up to 1 km, kept when the full-resolution OSM timezone
           polygons (PyPI timezonefinder-data, 2026c, the release the index's borders come from)
           give the same country at the point and 500 m around it. Label: that country.
  border   From an inside point, a step of 0.5-10 km in a random direction that lands in another
           country per timezonefinder-data. Label: that country. (Points in the three zones that
           span two countries are left out: their label needs another source.)
  ocean    Uniform points in timezonefinder's Etc/* (international waters) zones. Label: no country.
  cities   GeoNames places over 100,000 people. Label: their country and name.
  regions  Inside points in countries that have ISO 3166-2 subdivisions: share given a region code.

Usage (in the cache venv, after scripts/fetch-geodata.sh, scripts/build-world-index.sh and
Benchmarks/geocoder/bench.sh's peer install):
  cache/geodata/venv/bin/python Benchmarks/geocoder/accuracy.py --index cache/geodata/world.gidx [--n 20000]
"""
import argparse
import collections
import json
import math
import os
import random
import subprocess
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MULTI_COUNTRY_ZONES = {"Asia/Bangkok", "Europe/Belgrade", "Asia/Jerusalem"}


def zone_table(path):
    table = {}
    for line in open(path, encoding="utf-8"):
        if line.startswith("#") or not line.strip():
            continue
        cols = line.rstrip("\n").split("\t")
        table[cols[2]] = cols[0]
    return table


def step(lat, lon, km, bearing):
    dlat = km * math.cos(bearing) / 110.574
    dlon = km * math.sin(bearing) / (111.320 * max(math.cos(math.radians(lat)), 0.01))
    lon2 = lon + dlon
    if lon2 > 180:
        lon2 -= 360
    elif lon2 < -180:
        lon2 += 360
    return max(min(lat + dlat, 89.9), -89.9), lon2


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--index", default=os.path.join(ROOT, "cache/geodata/world.gidx"))
    ap.add_argument("--data", default=os.path.join(ROOT, "cache/geodata"))
    ap.add_argument("--n", type=int, default=20000)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--geoindex", default=None)
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("--misses", help="write geoindex's misses here (TSV: set, lat, lon, truth, ours)")
    a = ap.parse_args()
    rng = random.Random(a.seed)

    from timezonefinder import TimezoneFinder
    tf = TimezoneFinder()
    zones = zone_table(os.path.join(a.data, "deb/x_tzdata/usr/share/zoneinfo/zone.tab"))

    def truth(lat, lon):
        z = tf.timezone_at(lng=lon, lat=lat)
        if z is None or z.startswith("Etc/"):
            return None, z
        return zones.get(z), z

    places = []
    for line in open(os.path.join(a.data, "out/cities.txt"), encoding="utf-8"):
        f = line.rstrip("\n").split("\t")
        places.append((float(f[4]), float(f[5]), f[8], f[1], int(f[14] or 0)))
    iso_countries = set()
    for r in json.load(open(os.path.join(a.data, "out/iso_3166-2.json"), encoding="utf-8"))["3166-2"]:
        iso_countries.add(r["code"].split("-")[0])

    t0 = time.time()
    inside, border, ocean = [], [], []
    while len(inside) < a.n or len(border) < a.n:
        lat0, lon0, _, _, _ = places[rng.randrange(len(places))]
        lat, lon = step(lat0, lon0, rng.uniform(0, 1), rng.uniform(0, 2 * math.pi))
        cc, z = truth(lat, lon)
        if cc is None or z in MULTI_COUNTRY_ZONES:
            continue
        if len(inside) < a.n and all(truth(*step(lat, lon, 0.5, b * math.pi / 2))[0] == cc for b in range(4)):
            inside.append((lat, lon, cc))
        if len(border) < a.n:
            q = step(lat, lon, rng.uniform(0.5, 10), rng.uniform(0, 2 * math.pi))
            qcc, qz = truth(*q)
            if qcc is not None and qcc != cc and qz not in MULTI_COUNTRY_ZONES:
                border.append((q[0], q[1], qcc))
    while len(ocean) < a.n // 4:
        lat = math.degrees(math.asin(2 * rng.random() - 1))
        lon = rng.uniform(-180, 180)
        z = tf.timezone_at(lng=lon, lat=lat)
        if z is not None and z.startswith("Etc/"):
            ocean.append((lat, lon, None))
    cities = [(p[0], p[1], p[2], p[3]) for p in places if p[4] > 100000]
    print(f"truth sets: inside {len(inside)}, border {len(border)}, ocean {len(ocean)}, cities {len(cities)} "
          f"(derived in {time.time() - t0:.0f}s, seed {a.seed})", flush=True)

    # --- geoindex, through `geoindex lookup --batch`, one process for everything
    binary = a.geoindex or subprocess.check_output(["swift", "build", "-c", "release", "--show-bin-path"], cwd=ROOT, text=True).strip() + "/geoattrctl"
    allpoints = [(p[0], p[1]) for p in inside + border + ocean] + [(c[0], c[1]) for c in cities]
    t0 = time.time()
    out = subprocess.run([binary, "lookup", "--batch", "--index", a.index], input="".join(f"{la},{lo}\n" for la, lo in allpoints),
                         capture_output=True, text=True, check=True).stdout.splitlines()
    ours_time = time.time() - t0
    ours = [json.loads(line) for line in out]
    assert len(ours) == len(allpoints), "lost lines"

    # --- the peer: reverse_geocoder 1.5.1 (k-d tree over GeoNames cities1000), single process
    import reverse_geocoder as rg
    t0 = time.time()
    geo = rg.RGeocoder(mode=1, verbose=False)
    load = time.time() - t0
    t0 = time.time()
    peer = geo.query(allpoints)
    peer_time = time.time() - t0

    misses_file = open(a.misses, "w", encoding="utf-8") if a.misses else None

    def score(name, rows, offset, ours_key, peer_key, truth_of):
        ok_ours = ok_peer = 0
        misses = collections.Counter()
        for i, row in enumerate(rows):
            t = truth_of(row)
            o = ours[offset + i].get(ours_key)
            p = peer[offset + i].get(peer_key)
            ok_ours += (o == t)
            ok_peer += (p == t)
            if o != t:
                misses[f"{t}->{o}"] += 1
                if misses_file:
                    misses_file.write(f"{name}\t{row[0]:.6f}\t{row[1]:.6f}\t{t}\t{o}\n")
        n = len(rows)
        print(f"  {name:58s} geoindex {100 * ok_ours / n:6.2f}%   peer {100 * ok_peer / n:6.2f}%   (n={n})")
        if a.verbose:
            print(f"      geoindex misses (truth->ours): {misses.most_common(12)}")

    print(f"geoindex: {len(allpoints)} points in {ours_time:.2f}s through lookup --batch; "
          f"peer: load {load:.2f}s, query {peer_time:.2f}s")
    off = 0
    score("country, inside countries (>=0.5 km from a border)", inside, off, "geo.country.iso_code", "cc", lambda r: r[2])
    off += len(inside)
    score("country, 0.5-10 km from a land border", border, off, "geo.country.iso_code", "cc", lambda r: r[2])
    off += len(border)
    score("no country for open-ocean points", ocean, off, "geo.country.iso_code", "cc", lambda r: None)
    off += len(ocean)
    score("city cores (>100k people): country", cities, off, "geo.country.iso_code", "cc", lambda r: r[2])
    score("city cores (>100k people): locality name", cities, off, "geo.locality.name", "name", lambda r: r[3])
    have = [o for o, r in zip(ours[:len(inside)], inside) if r[2] in iso_countries]
    coded = sum(1 for o in have if o.get("geo.region.iso_code"))
    print(f"  {'region code given (inside points, countries with ISO 3166-2)':58s} geoindex {100 * coded / max(len(have), 1):6.2f}%   "
          f"peer    n/a   (n={len(have)}; the peer's admin1 is a name, never a code)")
    with_region = [o for o in ours if o.get("geo.region.iso_code")]
    consistent = sum(1 for o in with_region if o["geo.region.iso_code"].startswith(o.get("geo.country.iso_code", "??") + "-"))
    print(f"  {'region code has the country as prefix (all answers with one)':58s} geoindex {100 * consistent / max(len(with_region), 1):6.2f}%"
          f"   (n={len(with_region)})")


if __name__ == "__main__":
    main()
