"""An index file that shrinks while it is open (copied over in place, truncated) raises
IndexRefused through every door instead of killing the process with SIGBUS, and a Geocoder opened
once the file is whole again answers as before."""
import os
import random
import shutil
import threading
import time

import pyarrow.parquet as pq
import pytest
from geoattrd_geocoder import Geocoder, IndexRefused

from test_engines import sample_table


def shrink(path):
    """What a copy in place does first: the file cut short under every mapping of it."""
    os.truncate(path, min(4096, os.path.getsize(path) // 2))


@pytest.fixture
def copy(index, tmp_path, request):
    """A copy of the index that a test may shrink (the shared one stays whole), named after the
    test: Spark ships a file by its name, once per session."""
    path = tmp_path / f"{request.node.name}.gidx"
    shutil.copyfile(index, path)
    return str(path)


def points(count=2000, seed=11):
    rng = random.Random(seed)
    return [rng.uniform(-60, 70) for _ in range(count)], [rng.uniform(-180, 180) for _ in range(count)]


def test_lookup_columns_after_the_file_shrank_raises_index_refused(copy):
    latitudes, longitudes = points()
    geocoder = Geocoder(copy)
    before = [column.to_pylist() for column in geocoder.lookup_columns(latitudes, longitudes)]
    shrink(copy)
    with pytest.raises(IndexRefused, match="changed while it was open") as raised:
        geocoder.lookup_columns(latitudes, longitudes)
    assert raised.value.path == copy
    # It stays refused: answers read from zeros are never returned later either.
    with pytest.raises(IndexRefused):
        geocoder.lookup_columns(latitudes[:10], longitudes[:10])
    geocoder.close()


def test_a_geocoder_opened_once_the_file_is_whole_answers_as_before(copy, index):
    latitudes, longitudes = points()
    with Geocoder(copy) as geocoder:
        before = [column.to_pylist() for column in geocoder.lookup_columns(latitudes, longitudes)]
        shrink(copy)
        with pytest.raises(IndexRefused):
            geocoder.lookup_columns(latitudes, longitudes)
        with pytest.raises(IndexRefused):
            Geocoder(copy)
        shutil.copyfile(index, copy)
    with Geocoder(copy) as reopened:
        assert [column.to_pylist() for column in reopened.lookup_columns(latitudes, longitudes)] == before


def test_duckdb_function_after_the_file_shrank_raises(copy):
    import duckdb
    from geoattrd_geocoder.duckdb import register

    connection = duckdb.connect()
    register(connection, index=copy)
    connection.register("points", sample_table(count=400))
    assert connection.sql("SELECT count(*) FROM (SELECT geo_lookup(lat, lon) FROM points)").fetchall() == [(402,)]
    shrink(copy)
    with pytest.raises(Exception, match="changed while it was open"):
        connection.sql("SELECT geo_lookup(lat, lon).geo_country_iso_code FROM points").fetchall()


def test_spark_enrich_after_the_file_shrank_fails_the_job_not_the_worker(copy, spark, tmp_path):
    from pyspark import SparkFiles
    from geoattrd_geocoder.spark import enrich

    pq.write_table(sample_table(count=400), tmp_path / "points.parquet")
    df = spark.read.parquet(str(tmp_path / "points.parquet")).coalesce(1)
    # The first job opens the index in a Python worker, which Spark keeps for the next one.
    assert enrich(df, index=copy).count() == 402
    # The executors map the copy Spark shipped (SparkFiles), not the path given.
    shrink(SparkFiles.get(os.path.basename(copy)))
    with pytest.raises(Exception) as raised:
        enrich(df, index=copy).collect()
    message = str(raised.value)
    assert "IndexRefused" in message, message[-2000:]
    assert "crashed" not in message and "exited unexpectedly" not in message, message[-2000:]


def churn(path, whole, stop):
    """Cuts the file short and writes it whole again, in place, until `stop` is set."""
    while not stop.is_set():
        with open(path, "r+b") as file:
            file.truncate(4096)
            time.sleep(0.002)
            file.seek(0)
            file.write(whole)
        time.sleep(0.005)


def under_churn(path, seconds, attempt):
    """Runs `attempt()` again and again for `seconds` while another thread cuts the file short and
    rewrites it; returns how many attempts answered and how many raised IndexRefused."""
    with open(path, "rb") as file:
        whole = file.read()
    stop = threading.Event()
    thread = threading.Thread(target=churn, args=(path, whole, stop), daemon=True)
    thread.start()
    answered = refused = 0
    deadline = time.monotonic() + seconds
    try:
        while time.monotonic() < deadline:
            try:
                attempt()
                answered += 1
            except IndexRefused:
                refused += 1
    finally:
        stop.set()
        thread.join()
    return answered, refused


def test_lookup_columns_while_the_file_is_cut_and_rewritten(copy):
    latitudes, longitudes = points(500)
    with Geocoder(copy) as geocoder:
        want = [column.to_pylist() for column in geocoder.lookup_columns(latitudes, longitudes)]
    state = {"geocoder": None}

    def attempt():
        # A refused Geocoder stays refused: a new one is opened after each refusal.
        if state["geocoder"] is None:
            state["geocoder"] = Geocoder(copy)
        try:
            got = [column.to_pylist() for column in state["geocoder"].lookup_columns(latitudes, longitudes)]
        except IndexRefused:
            state["geocoder"] = None
            raise
        assert got == want

    answered, refused = under_churn(copy, 2, attempt)
    assert answered + refused > 0
    assert refused > 0, "the file was cut short many times: some lookup must have seen it"


def test_duckdb_while_the_file_is_cut_and_rewritten(copy):
    import duckdb
    from geoattrd_geocoder.duckdb import register

    table = sample_table(count=300)
    state = {"connection": None}

    def attempt():
        if state["connection"] is None:
            connection = duckdb.connect()
            register(connection, index=copy)
            connection.register("points", table)
            state["connection"] = connection
        try:
            state["connection"].sql("SELECT geo_lookup(lat, lon).geo_country_iso_code FROM points").fetchall()
        except duckdb.Error as error:
            if "changed while it was open" not in str(error) and "IndexRefused" not in str(error):
                raise
            state["connection"] = None
            raise IndexRefused(copy, str(error))

    answered, refused = under_churn(copy, 2, attempt)
    assert answered + refused > 0


def test_spark_while_the_file_is_cut_and_rewritten(copy, spark, tmp_path):
    from pyspark import SparkFiles
    from geoattrd_geocoder.spark import enrich

    pq.write_table(sample_table(count=300), tmp_path / "points.parquet")
    df = spark.read.parquet(str(tmp_path / "points.parquet")).coalesce(1)
    assert enrich(df, index=copy).count() == 302
    shipped = SparkFiles.get(os.path.basename(copy))

    def attempt():
        try:
            enrich(df, index=copy).collect()
        except Exception as error:
            message = str(error)
            assert "crashed" not in message and "exited unexpectedly" not in message, message[-2000:]
            if "IndexRefused" not in message:
                raise
            raise IndexRefused(shipped, message)

    answered, refused = under_churn(shipped, 3, attempt)
    assert answered + refused > 0
