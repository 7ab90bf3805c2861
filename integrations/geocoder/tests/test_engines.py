"""DuckDB's and Spark's doors give the Arrow door's answers."""
import os
import random

import pyarrow as pa
import pyarrow.parquet as pq
from geoattrd_geocoder import Geocoder


def sample_table(count=4000, seed=7):
    rng = random.Random(seed)
    lats = [rng.uniform(-60, 70) for _ in range(count // 2)] + [rng.uniform(-1, 3) for _ in range(count // 2)]
    lons = [rng.uniform(-180, 180) for _ in range(count // 2)] + [rng.uniform(-1, 5) for _ in range(count // 2)]
    # Two bad points last: a null latitude and a NaN one.
    return pa.table({"id": list(range(count + 2)), "lat": lats + [None, float("nan")], "lon": lons + [1.0, 1.0]})


def expected(index, table):
    with Geocoder(index) as geocoder:
        return geocoder.lookup_arrow(table), geocoder.columns


def test_duckdb_geo_lookup_from_sql(index):
    import duckdb
    from geoattrd_geocoder.duckdb import register

    table = sample_table()
    want, columns = expected(index, table)
    connection = duckdb.connect()
    register(connection, index=index)
    connection.register("points", table)
    got = connection.sql("SELECT id, unnest(geo_lookup(lat, lon)) FROM points ORDER BY id").arrow()
    got = got if isinstance(got, pa.Table) else got.read_all()
    assert got.column_names == ["id"] + columns
    for column in columns:
        assert got.column(column).to_pylist() == want.column(column).to_pylist(), column
    assert got.column("geo_country_iso_code")[-1].as_py() is None and got.column("geo_country_iso_code")[-2].as_py() is None
    assert got.column("geo_country_iso_code").null_count < table.num_rows


def test_spark_enrich_local_2(index, tmp_path, spark):
    from geoattrd_geocoder.spark import enrich

    table = sample_table()
    want, columns = expected(index, table)
    pq.write_table(table, tmp_path / "points.parquet")
    df = spark.read.parquet(str(tmp_path / "points.parquet"))
    out = enrich(df, lat="lat", lon="lon", index=os.path.abspath(index))
    assert out.columns == ["id", "lat", "lon"] + columns
    out.write.parquet(str(tmp_path / "enriched"))
    got = pq.read_table(tmp_path / "enriched").sort_by("id")
    assert got.num_rows == table.num_rows
    for column in columns:
        assert got.column(column).to_pylist() == want.column(column).to_pylist(), column
