"""Throughput of the back office's doors and of the peer, in one run (a benchmark, not a test):

  in-process   geoindex-bench lookup --file POINTS (the reader alone), pinned to one core, in the
               file's order and in the doors' spatial order (--spatial-order)
  cli          geoattrctl lookup --batch --jobs 1 < POINTS > /dev/null, pinned
  arrow        Geocoder.lookup_arrow on the points as one Arrow table, pinned
  duckdb       CREATE TABLE ... AS SELECT id, unnest(geo_lookup(lat, lon)), one DuckDB thread, pinned
  spark        enrich() in local[2], Parquet in to Parquet out (SPARK_POINTS), and the same job
               with a mapInArrow that passes its batches through: what Spark itself costs
  peer         DuckDB's spatial extension (from PyPI duckdb-extension-spatial, loaded from the
               package's file, offline) joining the first PEER points against the index's own
               sources, countries.geojson (the zones with their country) and admin1.geojson,
               with its spatial join (an R-tree over the polygons), one thread; and its country
               and region agreement with the Arrow function's answers

    PYTHON Benchmarks/backoffice/bench.py --index world.gidx --geoattrctl GEOATTRCTL \\
        --geoindex-bench GEOINDEX_BENCH --points populated-1m.csv --spark-points populated-2m.csv \\
        --data cache/geodata/out [--peer-points 20000] [--rounds 3]

Benchmarks/backoffice/run.sh makes the venv, the point sets and runs it. Medians of ROUNDS.
"""
import argparse
import glob
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

from pointsets import read_points, spark_session

PINNED = ["taskset", "-c", "1"]

# Run in a pinned child: sys.argv is [the index, the points], sys.path starts with this directory.
ARROW = """
import sys, time
from geoattrd_geocoder import Geocoder
from pointsets import read_points
points = read_points(sys.argv[2])
with Geocoder(sys.argv[1]) as geocoder:
    geocoder.lookup_arrow(points)
    start = time.perf_counter()
    geocoder.lookup_arrow(points)
    print(points.num_rows / (time.perf_counter() - start))
"""

DUCKDB = """
import sys, time, duckdb
from geoattrd_geocoder.duckdb import register
from pointsets import read_points
points = read_points(sys.argv[2])
connection = duckdb.connect(config={"threads": 1})
register(connection, index=sys.argv[1])
connection.execute("CREATE TABLE points AS SELECT row_number() OVER () AS id, lat, lon FROM points")
connection.execute("CREATE TABLE warm AS SELECT id, unnest(geo_lookup(lat, lon)) FROM points")
start = time.perf_counter()
connection.execute("CREATE TABLE answers AS SELECT id, unnest(geo_lookup(lat, lon)) FROM points")
print(points.num_rows / (time.perf_counter() - start))
"""


def median_of(rounds, command):
    values = []
    for _ in range(rounds):
        values.append(command())
    return statistics.median(values), values


def in_process(a, *order):
    out = subprocess.run(PINNED + [a.geoindex_bench, "lookup", a.index, "--file", a.points, *order], capture_output=True,
                         text=True, check=True).stdout
    return float(re.search(r"throughput: (\d+) lookups/s", out).group(1))


def cli(a):
    lines = sum(1 for _ in open(a.points))
    with open(a.points, "rb") as points, open(os.devnull, "wb") as sink:
        start = time.perf_counter()
        subprocess.run(PINNED + [a.geoattrctl, "lookup", "--batch", "--jobs", "1", "--index", a.index], stdin=points,
                       stdout=sink, check=True)
        return lines / (time.perf_counter() - start)


def python_rate(code, a):
    code = f"import sys; sys.path.insert(0, {os.path.dirname(os.path.abspath(__file__))!r})\n" + code
    return float(subprocess.run(PINNED + [sys.executable, "-c", code, a.index, a.points], capture_output=True, text=True,
                                check=True).stdout.strip().splitlines()[-1])


def spark(a):
    import pyarrow.parquet as pq

    from geoattrd_geocoder.spark import enrich

    session = spark_session("geoattrd-geocoder-bench", **{"spark.sql.execution.arrow.maxRecordsPerBatch": a.spark_batch})
    results = {"enrich": [], "pass-through": []}
    try:
        with tempfile.TemporaryDirectory() as work:
            table = read_points(a.spark_points)
            pq.write_table(table, os.path.join(work, "in.parquet"), row_group_size=1 << 18)
            rows = table.num_rows
            for round in range(a.rounds + 1):  # the first round warms the JVM and the workers
                for job in ("enrich", "pass-through"):
                    df = session.read.parquet(os.path.join(work, "in.parquet"))
                    out = enrich(df, index=os.path.abspath(a.index)) if job == "enrich" else df.mapInArrow(lambda batches: batches, df.schema)
                    start = time.perf_counter()
                    out.write.mode("overwrite").parquet(os.path.join(work, f"out-{job}"))
                    if round:
                        results[job].append(rows / (time.perf_counter() - start))
    finally:
        session.stop()
    return rows, results


def peer(a):
    import duckdb
    import duckdb_extension_spatial

    from geoattrd_geocoder import Geocoder

    extension = glob.glob(os.path.join(os.path.dirname(duckdb_extension_spatial.__file__), "extensions", "v*",
                                       "spatial.duckdb_extension"))[0]
    connection = duckdb.connect(config={"threads": 1})
    connection.execute(f"LOAD '{extension}'")
    start = time.perf_counter()
    connection.execute(f"CREATE TABLE countries AS SELECT country, geom FROM ST_Read('{a.data}/countries.geojson')")
    connection.execute(f"CREATE TABLE regions AS SELECT iso_3166_2 AS region, geom FROM ST_Read('{a.data}/admin1.geojson')")
    loaded = time.perf_counter() - start
    points = read_points(a.points).slice(0, a.peer_points)
    connection.execute("CREATE TABLE points AS SELECT row_number() OVER () - 1 AS id, lat, lon FROM points")
    start = time.perf_counter()
    countries = dict(connection.sql("SELECT p.id, min(c.country) FROM points p JOIN countries c "
                                    "ON ST_Intersects(c.geom, ST_Point(p.lon, p.lat)) GROUP BY p.id").fetchall())
    country_rate = len(points) / (time.perf_counter() - start)
    start = time.perf_counter()
    regions = dict(connection.sql("SELECT p.id, min(r.region) FROM points p JOIN regions r "
                                  "ON ST_Intersects(r.geom, ST_Point(p.lon, p.lat)) GROUP BY p.id").fetchall())
    region_rate = len(points) / (time.perf_counter() - start)
    with Geocoder(a.index) as geocoder:
        ours = geocoder.lookup_arrow(points).to_pydict()
    both = [i for i in range(len(points)) if ours["geo_country_iso_code"][i] and countries.get(i)]
    agree = sum(ours["geo_country_iso_code"][i] == countries[i] for i in both)
    regions_both = [i for i in range(len(points)) if ours["geo_region_iso_code"][i] and regions.get(i)]
    regions_agree = sum(ours["geo_region_iso_code"][i] == regions[i] for i in regions_both)
    return {"points": len(points), "load_s": loaded, "country_rate": country_rate, "region_rate": region_rate,
            "country_agree": (agree, len(both)), "region_agree": (regions_agree, len(regions_both)),
            "country_only_ours": sum(1 for i in range(len(points)) if ours["geo_country_iso_code"][i] and not countries.get(i)),
            "country_only_peer": sum(1 for i in range(len(points)) if countries.get(i) and not ours["geo_country_iso_code"][i])}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--index", required=True)
    ap.add_argument("--geoattrctl", required=True)
    ap.add_argument("--geoindex-bench", required=True)
    ap.add_argument("--points", required=True)
    ap.add_argument("--spark-points", required=True)
    ap.add_argument("--data", required=True, help="the fetched sources (countries.geojson, admin1.geojson)")
    ap.add_argument("--peer-points", type=int, default=20000)
    ap.add_argument("--spark-batch", type=int, default=65536, help="spark.sql.execution.arrow.maxRecordsPerBatch")
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    print(f"== {os.cpu_count()} cores, load {open('/proc/loadavg').read().split()[:3]}; points {a.points}")
    rows = []
    for label, measure in (("in-process lookup (geoindex-bench lookup --file), one core", lambda: in_process(a)),
                           ("in-process lookup in spatial order (--spatial-order), one core",
                            lambda: in_process(a, "--spatial-order")),
                           ("geoattrctl lookup --batch --jobs 1, one core", lambda: cli(a)),
                           ("Arrow function (Geocoder.lookup_arrow), one core", lambda: python_rate(ARROW, a)),
                           ("DuckDB geo_lookup, one thread, one core", lambda: python_rate(DUCKDB, a))):
        rate, values = median_of(a.rounds, measure)
        rows.append((label, rate))
        print(f"{label}: {rate / 1e3:.1f} k points/s (rounds: {', '.join(f'{v / 1e3:.1f}' for v in values)})", flush=True)
    in_proc, in_order, cli_rate, arrow = (rate for _, rate in rows[:4])
    print(f"Arrow function / in-process lookup: {arrow / in_proc:.3f} (file order), {arrow / in_order:.3f} (spatial order); "
          f"Arrow function / geoattrctl: {arrow / cli_rate:.2f}")
    count, jobs = spark(a)
    enrich_rate, passing = statistics.median(jobs["enrich"]), statistics.median(jobs["pass-through"])
    print(f"Spark local[2], Parquet to Parquet, {count} points, Arrow batches of {a.spark_batch}: enrich {enrich_rate / 1e3:.1f} k points/s, "
          f"pass-through {passing / 1e3:.1f} k points/s; Spark's share of the enrich job's time: {enrich_rate / passing:.0%}")
    p = peer(a)
    print(f"peer: DuckDB spatial join, one thread, {p['points']} points (polygons loaded in {p['load_s']:.1f} s): "
          f"country {p['country_rate']:.0f} points/s, admin-1 region {p['region_rate']:.0f} points/s")
    print(f"peer agreement: country {p['country_agree'][0]}/{p['country_agree'][1]}, region code "
          f"{p['region_agree'][0]}/{p['region_agree'][1]}; a country from ours only {p['country_only_ours']}, "
          f"from the peer only {p['country_only_peer']}")
    print(f"Arrow function / peer (country alone): {arrow / p['country_rate']:.0f}x")


if __name__ == "__main__":
    main()
