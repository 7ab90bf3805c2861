"""The `geoattrd` resource detector, through OTEL_EXPERIMENTAL_RESOURCE_DETECTORS alone."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

from conftest import geo

from geoattrd_opentelemetry import GeoAttrdResourceDetector

# An application's usual SDK set-up: not one line about geoattrd.
APP = r"""
import json
from opentelemetry.sdk.resources import Resource, get_aggregated_resources
from opentelemetry.sdk.trace import TracerProvider
print(json.dumps({
    "create": dict(Resource.create().attributes),
    "provider": dict(TracerProvider().resource.attributes),
}))
"""


def run_app(socket_path: str, detectors: str = "geoattrd") -> dict:
    env = dict(os.environ, OTEL_EXPERIMENTAL_RESOURCE_DETECTORS=detectors, GEOATTRD_SOCKET=socket_path)
    result = subprocess.run([sys.executable, "-c", APP], capture_output=True, text=True, env=env, timeout=30)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_the_entry_point_is_registered():
    from importlib.metadata import entry_points

    found = [ep for ep in entry_points().select(group="opentelemetry_resource_detector") if ep.name == "geoattrd"]
    assert len(found) == 1
    assert found[0].load() is GeoAttrdResourceDetector


def test_the_environment_variable_alone(daemon):
    out = run_app(daemon.socket, "geoattrd,otel")
    for attributes in (out["create"], out["provider"]):
        assert geo(attributes) == {"geo.location.lat": 47.3769, "geo.location.lon": 8.5417}
        assert type(attributes["geo.location.lat"]) is float
        assert attributes["service.name"].startswith("unknown_service")


def test_in_process_with_get_aggregated_resources(daemon, monkeypatch):
    from opentelemetry.sdk.resources import Resource, get_aggregated_resources

    monkeypatch.setenv("GEOATTRD_SOCKET", daemon.socket)
    monkeypatch.setenv("OTEL_EXPERIMENTAL_RESOURCE_DETECTORS", "geoattrd")
    assert geo(Resource.create().attributes)["geo.location.lon"] == 8.5417
    resource = get_aggregated_resources([GeoAttrdResourceDetector()], Resource.get_empty())
    assert geo(resource.attributes) == {"geo.location.lat": 47.3769, "geo.location.lon": 8.5417}


def test_an_absent_socket_gives_an_empty_resource_quickly(workdir):
    path = str(workdir / "absent.sock")
    started = time.monotonic()
    out = run_app(path)
    assert geo(out["create"]) == {} and geo(out["provider"]) == {}
    started = time.monotonic()
    resource = GeoAttrdResourceDetector(socket_path=path).detect()
    took = time.monotonic() - started
    assert dict(resource.attributes) == {}
    assert took < 0.05, took


def test_a_silent_server_is_given_up_on_at_the_timeout(fake_server):
    server = fake_server(lambda conn: conn.hold())
    started = time.monotonic()
    resource = GeoAttrdResourceDetector(socket_path=server.path).detect()
    took = time.monotonic() - started
    assert dict(resource.attributes) == {}
    assert 0.09 <= took < 0.3, took


def test_403_and_503_give_an_empty_resource(fake_server, make_daemon):
    server = fake_server(lambda conn: conn.respond(403, b'{"error":"forbidden","message":"no"}'))
    assert dict(GeoAttrdResourceDetector(socket_path=server.path).detect().attributes) == {}
    d = make_daemon(latitude=None, gpsd_enabled=True).start()
    assert d.attributes()[0] == 503
    assert dict(GeoAttrdResourceDetector(socket_path=d.socket).detect().attributes) == {}


def test_raise_on_error(workdir):
    import pytest

    from geoattrd_opentelemetry._http import Failure

    with pytest.raises(Failure):
        GeoAttrdResourceDetector(raise_on_error=True, socket_path=str(workdir / "absent.sock")).detect()
