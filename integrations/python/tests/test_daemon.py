"""Against the real geoattrd: spans and log records through the SDK's in-memory exporters."""

from __future__ import annotations

import logging
import time

from conftest import FAST, geo, geoattrd_threads, wait_until

from geoattrd_opentelemetry import GeoAttrdAttributeSource

ZURICH = (47.3769, 8.5417)
PARIS = (48.8566, 2.3522)
LISBON = (38.7223, -9.1393)


def test_spans_and_log_records_carry_geo_attributes(daemon, pipelines):
    p = pipelines(daemon.socket)
    assert p.source.wait_for_document(5), daemon.log()
    assert p.source.precision == "exact"

    span = geo(p.span_attributes())
    assert span == {"geo.location.lat": ZURICH[0], "geo.location.lon": ZURICH[1]}
    assert all(type(v) is float for v in span.values())

    record = geo(p.log_attributes())
    assert record == span
    # One thread for both processors.
    assert len(geoattrd_threads()) == 1


def test_integral_coordinates_are_floats(make_daemon, pipelines):
    # The daemon's JSON says 47 and 8 for 47.0 and 8.0.
    d = make_daemon(latitude=47.0, longitude=8.0).start()
    _, doc = d.attributes()
    assert doc["attributes"]["geo.location.lat"] == 47
    p = pipelines(d.socket)
    assert p.source.wait_for_document(5)
    span = geo(p.span_attributes())
    assert span == {"geo.location.lat": 47.0, "geo.location.lon": 8.0}
    assert type(span["geo.location.lat"]) is float and type(span["geo.location.lon"]) is float
    assert type(geo(p.log_attributes())["geo.location.lon"]) is float


def test_the_applications_own_geo_attributes_win(daemon, pipelines):
    p = pipelines(daemon.socket)
    assert p.source.wait_for_document(5)
    mine = {"geo.location.lat": 1.5, "geo.location.lon": 2.5, "http.method": "GET"}
    attrs = p.span_attributes(attributes=mine)
    assert attrs == mine
    # Other attributes do not stop the stamping.
    attrs = p.span_attributes(attributes={"http.method": "GET"})
    assert attrs["geo.location.lat"] == ZURICH[0] and attrs["http.method"] == "GET"
    # Log records likewise.
    p.logger.warning("with extra", extra={"geo.location.lat": 9.5})
    record = dict(p.log_exporter.get_finished_logs()[-1].log_record.attributes)
    assert record["geo.location.lat"] == 9.5 and "geo.location.lon" not in record


def test_span_limits_are_honoured(daemon, pipelines, monkeypatch):
    # A value length limit below the snapshot's longest value takes the SDK's own path.
    from opentelemetry.sdk.trace import SpanLimits, TracerProvider

    from geoattrd_opentelemetry import GeoAttrdSpanProcessor
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    source = GeoAttrdAttributeSource(daemon.socket, **FAST)
    assert source.wait_for_document(5)
    exporter = InMemorySpanExporter()
    provider = TracerProvider(span_limits=SpanLimits(max_attributes=1))
    provider.add_span_processor(GeoAttrdSpanProcessor(source=source))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    with provider.get_tracer("t").start_as_current_span("op"):
        pass
    span = exporter.get_finished_spans()[-1]
    assert len(span.attributes) == 1 and span.dropped_attributes == 1
    provider.shutdown()


def test_a_new_location_reaches_spans_within_a_second(make_daemon, pipelines):
    d = make_daemon(latitude=ZURICH[0], longitude=ZURICH[1]).start()
    p = pipelines(d.socket)
    assert p.source.wait_for_document(5)
    assert p.span_attributes()["geo.location.lat"] == ZURICH[0]

    d.move_to(*PARIS)  # returns once the daemon serves the new result
    served_at = time.monotonic()
    seen = wait_until(lambda: p.span_attributes()["geo.location.lat"] == PARIS[0] and time.monotonic(), 5, 0.005)
    assert seen, f"spans never showed the new place:\n{d.log()}"
    latency = seen - served_at
    time.sleep(max(0.0, served_at + 1.0 - time.monotonic()))
    span = geo(p.span_attributes())
    assert span == {"geo.location.lat": PARIS[0], "geo.location.lon": PARIS[1]}
    assert geo(p.log_attributes()) == span
    assert latency < 1.0, f"the new place took {latency:.3f} s to reach spans"
    print(f"new place on spans {latency * 1000:.1f} ms after the daemon served it")


def test_daemon_stopped_then_restarted(make_daemon, pipelines, caplog):
    caplog.set_level(logging.INFO, logger="geoattrd_opentelemetry")
    d = make_daemon(latitude=ZURICH[0], longitude=ZURICH[1]).start()
    source = GeoAttrdAttributeSource(d.socket, **FAST)
    p = pipelines(source=source)
    assert source.wait_for_document(5)
    before = geo(p.span_attributes())
    assert before["geo.location.lat"] == ZURICH[0]

    d.stop()
    # Spans go on, with the last attributes, while the thread retries.
    deadline = time.monotonic() + 1.0
    n = 0
    while time.monotonic() < deadline:
        assert geo(p.span_attributes()) == before
        assert geo(p.log_attributes()) == before
        n += 1
        time.sleep(0.01)
    assert n > 20 and source.running

    # Restarted somewhere else: first the cached result, then a forced fix at the new place.
    d.latitude, d.longitude = LISBON
    d.write_config()
    d.start()
    d.refresh()
    assert wait_until(lambda: p.span_attributes()["geo.location.lat"] == LISBON[0], 5), d.log()
    assert geo(p.log_attributes()) == {"geo.location.lat": LISBON[0], "geo.location.lon": LISBON[1]}

    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    # The outage is logged once per distinct failure however many attempts it took.
    assert len(warnings) == len(set(warnings)) and len(warnings) <= 3, warnings
    assert any("again" in r.getMessage() for r in caplog.records if r.levelno == logging.INFO)


def test_nothing_is_added_while_no_location_is_known(make_daemon, pipelines, caplog):
    caplog.set_level(logging.INFO, logger="geoattrd_opentelemetry")
    d = make_daemon(latitude=None, gpsd_enabled=True, heartbeat_s=0.2).start()
    status, doc = d.attributes()
    assert status == 503 and doc["error"] == "no_location"
    p = pipelines(d.socket)
    assert not p.source.wait_for_document(1.0)
    assert geo(p.span_attributes()) == {}
    assert geo(p.log_attributes()) == {}
    # The stream is open (heartbeats only): nothing is wrong, nothing is logged.
    assert p.source.mode == "watch"
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


def test_shutdown_stops_and_joins_the_thread(daemon, pipelines):
    p = pipelines(daemon.socket)
    assert p.source.wait_for_document(5)
    assert len(geoattrd_threads()) == 1
    p.tracer_provider.shutdown()
    # The log processor still uses the thread.
    assert len(geoattrd_threads()) == 1
    started = time.monotonic()
    p.logger_provider.shutdown()
    took = time.monotonic() - started
    assert geoattrd_threads() == [], "the thread outlived the SDK's shutdown"
    assert took < 1.0, f"shutdown took {took:.3f} s"
    # Shutting down again is harmless, and a processor after shutdown never raises.
    p.span_processor.shutdown()
    p.log_processor.shutdown()
    with p.tracer.start_as_current_span("after shutdown"):
        pass
    # A new pipeline after that gets a new thread.
    q = pipelines(daemon.socket)
    assert q.source.wait_for_document(5)
    assert len(geoattrd_threads()) == 1
