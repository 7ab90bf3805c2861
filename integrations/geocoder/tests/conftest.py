"""What the back office's tests share: the library under test (GEOATTRD_GEOCODER_LIBRARY, or the
installed wheel's), geoattrctl of the same build (GEOATTRD_TEST_GEOATTRCTL) and an index: the
world index when one is built (GEOATTRD_TEST_INDEX), else a small one built here by geoattrctl
from sources this file writes."""
import json
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))


def square(x0, y0, x1, y1):
    return [[x0, y0], [x1, y0], [x1, y1], [x0, y1], [x0, y0]]


def feature(properties, *polygons):
    return {"type": "Feature", "properties": properties,
            "geometry": {"type": "MultiPolygon", "coordinates": [[ring] for ring in polygons]}}


@pytest.fixture(scope="session")
def spark():
    """One Spark local[2] session for the tests that need one (it takes seconds to start). A
    task that fails is not tried again: a test that expects a failure gets it at once."""
    from pyspark.sql import SparkSession

    # The executors' Python is this one, where the package is.
    os.environ["PYSPARK_PYTHON"] = sys.executable
    session = (SparkSession.builder.master("local[2]").appName("geoattrd-geocoder-test")
               .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "2")
               .config("spark.task.maxFailures", "1").getOrCreate())
    yield session
    session.stop()


@pytest.fixture(scope="session")
def geoattrctl():
    path = os.environ.get("GEOATTRD_TEST_GEOATTRCTL") or os.path.join(ROOT, ".build/release/geoattrctl")
    if not os.access(path, os.X_OK):
        pytest.fail(f"no geoattrctl at {path}: swift build -c release --product geoattrctl, or set GEOATTRD_TEST_GEOATTRCTL")
    return path


@pytest.fixture(scope="session")
def index(geoattrctl, tmp_path_factory):
    world = os.environ.get("GEOATTRD_TEST_INDEX")
    if world:
        return world
    data = tmp_path_factory.mktemp("sources")
    countries = {"type": "FeatureCollection", "features": [
        feature({"country": "AA", "zone": "Test/AA"}, square(0, 0, 2, 2.5)),
        feature({"country": "BB", "zone": "Test/BB"}, square(2, 0, 4, 2)),
    ]}
    admin1 = {"type": "FeatureCollection", "features": [
        feature({"iso_a2": "AA", "name": "North", "iso_3166_2": "AA-N"}, square(0, 1, 2, 2)),
        feature({"iso_a2": "BB", "name": "Bee", "iso_3166_2": "BB-X"}, square(2, 0, 4, 2)),
    ]}
    iso = {"3166-2": [{"code": "AA-N", "name": "North", "type": "Province"},
                      {"code": "BB-X", "name": "Bee", "type": "Province"}]}
    (data / "countries.geojson").write_text(json.dumps(countries))
    (data / "admin1.geojson").write_text(json.dumps(admin1))
    (data / "iso_3166-2.json").write_text(json.dumps(iso))
    cities = [
        # geonameid, name, ascii, alternates, lat, lon, class, code, country, cc2, a1, a2, a3, a4, population, elevation, dem, tz, modified
        ["1", "Aville", "Aville", "", "1.5", "1.0", "P", "PPLA", "AA", "", "", "", "", "", "120000", "", "", "Test/AA", "2020-01-01"],
        ["2", "Beeburg", "Beeburg", "", "1.0", "3.0", "P", "PPL", "BB", "", "", "", "", "", "8000", "", "", "Test/BB", "2020-01-01"],
    ]
    (data / "cities.txt").write_text("".join("\t".join(row) + "\n" for row in cities))
    (data / "postal.txt").write_text("AA\t1000\tAville\t\t\t\t\t\t\t1.5\t1.0\t4\nBB\t2000\tBeeburg\t\t\t\t\t\t\t1.0\t3.0\t4\n")
    (data / "continents.tsv").write_text("AA\tEU\nBB\tEU\n")
    path = str(tmp_path_factory.mktemp("index") / "test.gidx")
    subprocess.run([geoattrctl, "index", "build", "--data", str(data), "--out", path], check=True, capture_output=True)
    return path


def cli_answers(geoattrctl, index, points):
    """geoattrctl lookup --batch's answers, one dict per point (attributes only)."""
    text = "".join(f"{lat!r},{lon!r}\n" for lat, lon in points)
    out = subprocess.run([geoattrctl, "lookup", "--batch", "--jobs", "1", "--index", index],
                         input=text, capture_output=True, text=True, check=True).stdout
    answers = []
    for line in out.splitlines():
        record = json.loads(line)
        answers.append({key.replace(".", "_"): value for key, value in record.items() if key.startswith("geo.")})
    return answers
