"""The PySpark script and the DuckDB query of docs/backoffice.md, run as a reader copies them."""
import os
import re
import subprocess
import sys

from conftest import ROOT

INSTALLED_INDEX = "/usr/share/geoattrd/world.gidx"


def block(heading):
    """The first ```python block after `heading` in docs/backoffice.md."""
    text = open(os.path.join(ROOT, "docs/backoffice.md"), encoding="utf-8").read()
    start = text.index(heading)
    match = re.search(r"```python\n(.*?)```", text[start:], re.S)
    assert match, f"no python block after {heading!r}"
    return match.group(1)


def run(code, index):
    # The documented path is the packaged index; the test's index stands in for it.
    code = code.replace(INSTALLED_INDEX, index)
    environment = dict(os.environ, PYSPARK_PYTHON=sys.executable)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=environment, timeout=300)


def test_the_duckdb_query(index):
    code = block("### DuckDB")
    assert len(code.strip().splitlines()) == 3
    done = run(code, index)
    assert done.returncode == 0, done.stderr[-2000:]
    if os.environ.get("GEOATTRD_TEST_INDEX"):
        assert "FR" in done.stdout and "FR-IDF" in done.stdout and "Paris" in done.stdout, done.stdout


def test_the_pyspark_script(index):
    code = block("### Spark")
    assert len(code.strip().splitlines()) <= 10
    done = run(code, index)
    assert done.returncode == 0, done.stderr[-2000:]
    if os.environ.get("GEOATTRD_TEST_INDEX"):
        assert "FR-IDF" in done.stdout and "Brussels" in done.stdout, done.stdout
