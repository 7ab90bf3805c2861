"""Precision levels: an application running as a uid mapped to `country` (or `none`) gets
what the daemon grants that uid, and nothing more. The client runs as that uid through
setpriv, against the real daemon."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

import pytest
from conftest import HERE, geo

COUNTRY_UID = 65534  # nobody
NONE_UID = 65533

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("setpriv"), reason="needs root and setpriv to run a client as another uid"
)


def _as_uid(uid: int, argv, env=None, timeout=30):
    return subprocess.run(
        ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", *argv],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd="/",
        env=env,
    )


@pytest.fixture(scope="module")
def python_for_other_uids():
    """This environment's Python if another uid can use it; else Debian's python3 with a
    world-readable copy of this environment's packages on PYTHONPATH."""
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
    probe = [sys.executable, "-c", "import geoattrd_opentelemetry, opentelemetry.sdk"]
    # GEOATTRD_TEST_COPY_PYLIB=1 takes the second way even where the first works.
    if os.environ.get("GEOATTRD_TEST_COPY_PYLIB") != "1" and _as_uid(COUNTRY_UID, probe, env).returncode == 0:
        yield [sys.executable], env
        return
    import geoattrd_opentelemetry

    top = Path(tempfile.mkdtemp(prefix="geoattrd-otel-pylib-"))
    os.chmod(top, 0o755)
    lib = top / "lib"
    lib.mkdir()
    site = Path(sysconfig.get_paths()["purelib"])
    for entry in site.iterdir():
        if entry.name in ("pip", "setuptools", "_pytest", "pytest") or entry.name.startswith("pip-"):
            continue
        (shutil.copytree if entry.is_dir() else shutil.copy2)(entry, lib / entry.name)
    package = Path(geoattrd_opentelemetry.__file__).resolve().parent
    if not (lib / "geoattrd_opentelemetry").exists():
        shutil.copytree(package, lib / "geoattrd_opentelemetry")
    for path in [lib, *lib.rglob("*")]:
        os.chmod(path, 0o755 if path.is_dir() else 0o644)
    python = shutil.which("python3", path="/usr/bin:/bin") or sys.executable
    env = dict(env, PYTHONPATH=str(lib))
    result = _as_uid(COUNTRY_UID, [python, "-c", "import geoattrd_opentelemetry, opentelemetry.sdk"], env)
    assert result.returncode == 0, result.stderr
    try:
        yield [python], env
    finally:
        shutil.rmtree(top, ignore_errors=True)


def _client(python, env, uid: int, socket_path: str) -> dict:
    result = _as_uid(uid, [*python, str(HERE / "client_as_uid.py"), socket_path], env)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_a_uid_mapped_to_country_gets_no_coordinates(make_daemon, python_for_other_uids):
    python, env = python_for_other_uids
    d = make_daemon(rules=(f"uid:{COUNTRY_UID}=country", f"uid:{NONE_UID}=none")).start()
    out = _client(python, env, COUNTRY_UID, d.socket)
    assert out["document"] and out["precision"] == "country", out
    span = geo(out["span"])
    # No geo.location.* at this level, ever.
    assert not [k for k in span if k.startswith("geo.location.")], span
    assert not [k for k in out["resource"] if k.startswith("geo.location.")], out["resource"]
    # At most the country; without an index the daemon knows no country, so: no geo.* at all.
    assert set(span) <= {"geo.country.iso_code"}
    assert span == {}, "no index: no country"
    assert out["resource"] == {}
    assert not out["thread_left"]
    # Root, meanwhile, sees the coordinates.
    status, doc = d.attributes()
    assert status == 200 and "geo.location.lat" in doc["attributes"]


def test_a_uid_mapped_to_none_gets_nothing_and_one_log_line(make_daemon, python_for_other_uids):
    python, env = python_for_other_uids
    d = make_daemon(rules=(f"uid:{NONE_UID}=none",)).start()
    out = _client(python, env, NONE_UID, d.socket)
    assert not out["document"] and out["precision"] is None
    assert geo(out["span"]) == {} and out["resource"] == {}
    refused = [m for m in out["logs"] if "403" in m]
    assert len(refused) == 1, out["logs"]
    assert not out["thread_left"]


def test_a_narrower_grant_reaches_a_running_client(make_daemon, python_for_other_uids):
    """The uid starts at the default (exact); a reload maps it to country: the daemon ends its
    stream, the client reconnects and loses the coordinates."""
    python, env = python_for_other_uids
    d = make_daemon().start()
    client = subprocess.Popen(
        ["setpriv", f"--reuid={COUNTRY_UID}", f"--regid={COUNTRY_UID}", "--clear-groups",
         *python, str(HERE / "follow_as_uid.py"), d.socket, "country"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd="/", env=env,
    )
    try:
        first = json.loads(client.stdout.readline())
        assert first["precision"] == "exact" and "geo.location.lat" in first["attributes"], first
        d.rules = (f"uid:{COUNTRY_UID}=country",)
        d.write_config()
        d.reload()
        second = json.loads(client.stdout.readline())
        assert second == {"precision": "country", "attributes": {}}, second
        assert client.wait(10) == 0, client.stderr.read()
    finally:
        if client.poll() is None:
            client.kill()
            client.wait()
