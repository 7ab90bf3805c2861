"""The Arrow door against geoattrctl lookup --batch, and what it does with bad input."""
import math
import os
import random
import struct
import subprocess
import sys

import pyarrow as pa
import pytest

from conftest import cli_answers
from geoattrd_geocoder import Geocoder, IndexRefused


def points(seed, count, box=(-90, 90, -180, 180)):
    rng = random.Random(seed)
    return [(round(rng.uniform(box[0], box[1]), 6), round(rng.uniform(box[2], box[3]), 6)) for _ in range(count)]


def rows(batch, columns):
    table = batch.to_pydict()
    return [{column: table[column][i] for column in columns if table[column][i] is not None} for i in range(batch.num_rows)]


def test_answers_are_the_cli_answers_field_for_field(index, geoattrctl):
    # Random points worldwide, and points around the first populated place the index knows.
    sample = points(1, 3000) + points(2, 3000, (-1, 3, -1, 5)) + [(48.8566, 2.3522), (49.6116, 6.1319)]
    with Geocoder(index) as geocoder:
        batch = pa.record_batch({"lat": [p[0] for p in sample], "lon": [p[1] for p in sample]})
        enriched = geocoder.lookup_arrow(batch)
        ours = rows(enriched, geocoder.columns)
    theirs = cli_answers(geoattrctl, index, sample)
    assert len(ours) == len(theirs) == len(sample)
    differing = [(p, a, b) for p, a, b in zip(sample, ours, theirs) if a != b]
    assert differing == []
    assert any(answer.get("geo_country_iso_code") for answer in ours)


def test_columns_are_named_after_the_attributes(index):
    with Geocoder(index) as geocoder:
        assert geocoder.columns[:4] == ["geo_country_iso_code", "geo_region_iso_code", "geo_locality_name", "geo_postal_code"]
        assert "geo_timezone" in geocoder.columns
        enriched = geocoder.lookup_arrow(pa.table({"id": [1], "lat": [1.5], "lon": [1.0]}))
        assert enriched.column_names == ["id", "lat", "lon"] + geocoder.columns
        assert all(enriched.schema.field(column).type == pa.string() for column in geocoder.columns)


def test_bad_coordinates_are_nulls_without_an_exception(index):
    bad = [None, math.nan, math.inf, -math.inf, 91.0, -90.5]
    with Geocoder(index) as geocoder:
        batch = pa.record_batch({"lat": pa.array(bad + [1.5], pa.float64()), "lon": pa.array([1.0] * 6 + [None], pa.float64())})
        enriched = geocoder.lookup_arrow(batch)
        for column in geocoder.columns:
            assert enriched.column(column).null_count == 7
        # Longitudes out of range, integer columns, float32 and an empty batch.
        assert geocoder.lookup_arrow(pa.record_batch({"lat": [1.5], "lon": [181.0]})).column("geo_country_iso_code").null_count == 1
        good = geocoder.lookup_arrow(pa.record_batch({"lat": pa.array([1], pa.int32()), "lon": pa.array([1.0], pa.float32())}))
        empty = geocoder.lookup_arrow(pa.record_batch({"lat": pa.array([], pa.float64()), "lon": pa.array([], pa.float64())}))
        assert empty.num_rows == 0
        assert good.column("geo_country_iso_code").to_pylist() == geocoder.lookup_arrow(
            pa.record_batch({"lat": [1.0], "lon": [1.0]})).column("geo_country_iso_code").to_pylist()
        with pytest.raises(TypeError, match="'lat' is string"):
            geocoder.lookup_arrow(pa.record_batch({"lat": ["1.5"], "lon": [1.0]}))


def test_a_second_lookup_replaces_the_columns(index):
    with Geocoder(index) as geocoder:
        once = geocoder.lookup_arrow(pa.table({"lat": [1.5, 1.0], "lon": [1.0, 3.0]}))
        stale = once.set_column(once.column_names.index("geo_country_iso_code"), "geo_country_iso_code", pa.array(["ZZ", "ZZ"]))
        again = geocoder.lookup_arrow(stale)
        assert again.equals(once)


def test_a_missing_or_mismatched_index_is_a_clear_exception(index, tmp_path):
    missing = tmp_path / "missing.gidx"
    with pytest.raises(IndexRefused) as refused:
        Geocoder(missing)
    assert refused.value.path == str(missing) and str(missing) in str(refused.value)
    # The same file with another format version in its header (the version is checked before
    # the checksums, as a reader of another release meets it).
    data = bytearray(open(index, "rb").read())
    data[8:12] = struct.pack("<I", Geocoder.index_format() - 1)
    older = tmp_path / "older.gidx"
    older.write_bytes(bytes(data))
    with pytest.raises(IndexRefused) as refused:
        Geocoder(older)
    message = str(refused.value)
    assert str(older) in message
    assert f"format version {Geocoder.index_format() - 1}" in message and f"format {Geocoder.index_format()}" in message


def test_two_processes_share_one_mapped_index(index):
    # Each process opens the index and looks up points all over it; while both hold it, the
    # index's pages each has resident are shared with the other (smaps: Shared_Clean).
    child = (
        "import sys, random, pyarrow as pa\n"
        "from geoattrd_geocoder import Geocoder\n"
        "g = Geocoder(sys.argv[1]); r = random.Random(3)\n"
        "pts = [(r.uniform(-60, 70), r.uniform(-180, 180)) for _ in range(20000)]\n"
        "g.lookup_arrow(pa.record_batch({'lat': [p[0] for p in pts], 'lon': [p[1] for p in pts]}))\n"
        "print('ready', flush=True); sys.stdin.readline()\n"
    )
    processes = [subprocess.Popen([sys.executable, "-c", child, index], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
                 for _ in range(2)]
    try:
        for process in processes:
            assert process.stdout.readline().strip() == "ready"
        shared = []
        real = os.path.realpath(index)
        for process in processes:
            total = 0
            inside = False
            with open(f"/proc/{process.pid}/smaps") as smaps:
                for line in smaps:
                    fields = line.split()
                    if "-" in fields[0] and len(fields) >= 5 and ":" in fields[3]:
                        inside = len(fields) >= 6 and fields[5] == real
                    elif inside and fields[0] == "Shared_Clean:":
                        total += int(fields[1])
            shared.append(total)
        assert all(kib > 0 for kib in shared), f"index pages shared (kB) per process: {shared}"
    finally:
        for process in processes:
            process.communicate("\n", timeout=30)


def test_the_library_needs_no_swift_toolchain():
    # The wheel's library carries the Swift runtime: it loads on a machine without Swift.
    import geoattrd_geocoder

    library = os.path.join(os.path.dirname(geoattrd_geocoder.__file__), "libgeoattrd_geocoder.so")
    needed = subprocess.run(["ldd", library], capture_output=True, text=True, check=True).stdout
    assert "libswift" not in needed and "not found" not in needed, needed
    exported = subprocess.run(["nm", "-D", "--defined-only", library], capture_output=True, text=True, check=True).stdout
    names = {line.split()[-1] for line in exported.splitlines() if " T " in line}
    assert names and all(name.startswith("geoattrd_geocoder_") for name in names), sorted(names)[:10]


def test_pandas_goes_through_arrow(index):
    import pandas as pd

    frame = pd.DataFrame({"lat": [1.5, 1.0, float("nan")], "lon": [1.0, 3.0, 1.0], "name": ["a", "b", "c"]})
    with Geocoder(index) as geocoder:
        enriched = geocoder.lookup_arrow(pa.Table.from_pandas(frame, preserve_index=False)).to_pandas()
        direct = geocoder.lookup_arrow(pa.table({"lat": [1.5, 1.0, None], "lon": [1.0, 3.0, 1.0]}))
    assert list(enriched["name"]) == ["a", "b", "c"]
    assert enriched["geo_country_iso_code"].tolist()[:2] == direct.column("geo_country_iso_code").to_pylist()[:2]
    assert enriched["geo_country_iso_code"].isna().tolist()[2]
