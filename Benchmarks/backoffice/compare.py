"""The back office's three doors against `geoattrctl lookup --batch`, field for field, on point
sets of any size: the Arrow function, DuckDB's geo_lookup and a Spark local[2] job (Parquet in,
Parquet out). Prints, per set and door, the points and the values that differ (expected: none).

    PYTHON Benchmarks/backoffice/compare.py --index world.gidx --geoattrctl .build/release/geoattrctl \\
        populated-1m.csv uniform-1m.csv border-1m.csv

PYTHON is a venv with the geoattrd-geocoder wheel, pyarrow, pandas, pyspark and duckdb
(Benchmarks/backoffice/run.sh makes it). A set is `lat,lon` lines.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import pyarrow as pa
import pyarrow.parquet as pq

from geoattrd_geocoder import Geocoder
from pointsets import read_points, spark_session


def cli_columns(geoattrctl, index, path, columns):
    """geoattrctl's answers as one list per column (None where it gives no value)."""
    out = subprocess.run([geoattrctl, "lookup", "--batch", "--index", index], stdin=open(path, "rb"),
                         capture_output=True, check=True).stdout.splitlines()
    result = {column: [] for column in columns}
    for line in out:
        # The columns are the attribute names with underscores for dots.
        answer = {key.replace(".", "_"): value for key, value in json.loads(line).items()}
        for column in columns:
            result[column].append(answer.get(column))
    return result


def differences(expected, table, columns):
    values = 0
    rows = set()
    for column in columns:
        got = table.column(column).to_pylist()
        want = expected[column]
        for i, (a, b) in enumerate(zip(got, want)):
            if a != b:
                values += 1
                rows.add(i)
        if len(got) != len(want):
            values += abs(len(got) - len(want))
    return len(rows), values


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--index", required=True, help="the index file both sides read")
    ap.add_argument("--geoattrctl", required=True, help="geoattrctl of the same build")
    ap.add_argument("sets", nargs="+", help="lat,lon files")
    a = ap.parse_args()
    index = os.path.abspath(a.index)
    with Geocoder(index) as geocoder:
        columns = geocoder.columns
    import duckdb

    from geoattrd_geocoder.duckdb import register
    from geoattrd_geocoder.spark import enrich

    spark = spark_session("geoattrd-geocoder-compare")
    failed = 0
    try:
        for path in a.sets:
            points = read_points(path, ids=True)
            started = time.time()
            expected = cli_columns(a.geoattrctl, index, path, columns)
            with Geocoder(index) as geocoder:
                arrow = geocoder.lookup_arrow(points)
            connection = duckdb.connect()
            register(connection, index=index)
            connection.register("points", points)
            duck = connection.sql("SELECT id, unnest(geo_lookup(lat, lon)) FROM points ORDER BY id").arrow()
            duck = duck if isinstance(duck, pa.Table) else duck.read_all()
            with tempfile.TemporaryDirectory() as work:
                pq.write_table(points, os.path.join(work, "in.parquet"))
                enrich(spark.read.parquet(os.path.join(work, "in.parquet")), index=index).write.parquet(os.path.join(work, "out"))
                sparked = pq.read_table(os.path.join(work, "out")).sort_by("id")
            answered = sum(v is not None for v in expected["geo_country_iso_code"])
            print(f"{os.path.basename(path)}: {points.num_rows} points, {answered} with a country "
                  f"(geoattrctl, the Arrow function, DuckDB and Spark in {time.time() - started:.0f} s)")
            for door, table in (("Arrow function", arrow), ("DuckDB geo_lookup", duck), ("Spark enrich, local[2]", sparked)):
                rows, values = differences(expected, table, columns)
                failed += rows
                print(f"  {door:24} {table.num_rows} rows; {rows} points and {values} values differ from geoattrctl lookup --batch")
    finally:
        spark.stop()
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
