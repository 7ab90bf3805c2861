"""Bad input from a fake server on a Unix socket: the snapshot keeps its last good value (or
stays empty), each distinct failure is logged once, the thread backs off and nothing reaches
the application."""

from __future__ import annotations

import json
import logging
import time

import pytest
from conftest import FAST, document, geo, wait_until

from geoattrd_opentelemetry import GeoAttrdAttributeSource

GOOD = document(47.3769, 8.5417, generation=1)
NEWER = document(48.8566, 2.3522, generation=2)


def good_stream(conn):
    conn.start_stream()
    conn.event(GOOD, 1)
    conn.end_stream()  # the daemon ends a stream like this at shutdown


def warnings_in(caplog):
    return [r.getMessage() for r in caplog.records if r.name == "geoattrd_opentelemetry" and r.levelno >= logging.WARNING]


@pytest.fixture
def logs(caplog):
    caplog.set_level(logging.INFO, logger="geoattrd_opentelemetry")
    return caplog


def follow(server, **kwargs) -> GeoAttrdAttributeSource:
    options = dict(FAST)
    options.update(kwargs)
    return GeoAttrdAttributeSource(server.path, **options)


def run_through(server, pipelines, source, attempts: int = 8):
    """Lets the thread make `attempts` more connections, stamping spans meanwhile."""
    p = pipelines(source=source)
    target = server.connections + attempts
    assert wait_until(lambda: (p.span_attributes(), server.connections >= target)[1], 10), server.connections
    return p


def bad_event_case(server_handler, fake_server, pipelines, logs, key_text):
    server = fake_server(good_stream, server_handler)
    source = follow(server)
    assert source.wait_for_document(5)
    p = run_through(server, pipelines, source)
    # The last good attributes stay, on spans and log records.
    assert geo(p.span_attributes()) == GOOD["attributes"]
    assert geo(p.log_attributes()) == GOOD["attributes"]
    assert source.running
    matching = [m for m in warnings_in(logs) if key_text in m]
    assert len(matching) == 1, warnings_in(logs)
    # No flood: one line per distinct failure, however many attempts.
    assert len(warnings_in(logs)) == len(set(warnings_in(logs))) <= 3, warnings_in(logs)
    return p


def test_malformed_json_keeps_the_snapshot(fake_server, pipelines, logs):
    def malformed(conn):
        conn.start_stream()
        conn.event(b'{"attributes": {"geo.location.lat": 1.0,', 2)
        conn.end_stream()

    bad_event_case(malformed, fake_server, pipelines, logs, "malformed JSON")


def test_a_malformed_event_does_not_end_the_stream(fake_server, pipelines, logs):
    def mixed(conn):
        conn.start_stream()
        conn.event(b"not json", 1)
        conn.event(json.dumps({"attributes": "nope"}), 2)
        conn.event(NEWER, 3)
        conn.hold()

    server = fake_server(mixed)
    source = follow(server)
    assert source.wait_for_document(5)
    assert source.generation == 2 and dict(source.attributes) == NEWER["attributes"]
    assert server.connections == 1
    assert len(warnings_in(logs)) == 2
    source.shutdown()


def test_an_oversized_event_is_refused(fake_server, pipelines, logs):
    def oversized(conn):
        conn.start_stream()
        big = document(1.0, 2.0, generation=9, **{"geo.locality.name": "x" * (100 * 1024)})
        # In several chunks, as a real stream would carry it.
        data = b"id: 9\nevent: attributes\ndata: " + json.dumps(big).encode() + b"\n\n"
        for i in range(0, len(data), 8192):
            conn.chunk(data[i : i + 8192])
        conn.end_stream()

    p = bad_event_case(oversized, fake_server, pipelines, logs, "event larger than 65536 bytes")
    assert "geo.locality.name" not in p.span_attributes()


def test_an_oversized_line_without_end_is_refused(fake_server, pipelines, logs):
    def endless(conn):
        conn.start_stream()
        conn.chunk(b"data: " + b"y" * (200 * 1024))
        conn.hold()

    bad_event_case(endless, fake_server, pipelines, logs, "event larger than 65536 bytes")


def test_a_stream_cut_mid_event(fake_server, pipelines, logs):
    def cut(conn):
        conn.start_stream()
        conn.chunk(b'id: 5\nevent: attributes\ndata: {"attributes": {"geo.location.lat": 1')
        # and the connection closes: no end of event, no end of body

    p = bad_event_case(cut, fake_server, pipelines, logs, "cut mid-event")
    assert p.source.generation == 1


def test_a_chunk_cut_short(fake_server, pipelines, logs):
    def cut(conn):
        conn.start_stream()
        conn.send(b"400\r\nid: 5\nevent: attri")  # announces 1024 bytes, sends a few

    bad_event_case(cut, fake_server, pipelines, logs, "cut mid-event")


def test_an_event_split_at_every_byte(fake_server, pipelines, logs):
    def trickle(conn):
        conn.start_stream()
        data = b"id: 2\r\nevent: attributes\r\ndata: " + json.dumps(NEWER).encode() + b"\r\n\r\n"
        for i in range(len(data)):
            conn.chunk(data[i : i + 1])
        conn.send(b": heartbeat\n\n")  # not chunk-framed: a protocol error after the event
        conn.hold()

    server = fake_server(trickle, lambda conn: conn.hold())
    source = follow(server)
    assert source.wait_for_document(5)
    assert dict(source.attributes) == NEWER["attributes"]
    assert wait_until(lambda: warnings_in(logs), 5)
    assert dict(source.attributes) == NEWER["attributes"]
    source.shutdown()


def test_403_leaves_the_snapshot_empty(fake_server, pipelines, logs):
    def forbidden(conn):
        conn.respond(403, b'{"error":"forbidden","message":"uid 1 gid 1 may not read location data; see access.rules"}',
                     {"content-type": "application/json"})

    server = fake_server(forbidden)
    source = follow(server)
    p = run_through(server, pipelines, source)
    assert geo(p.span_attributes()) == {} and geo(p.log_attributes()) == {}
    assert [m for m in warnings_in(logs) if "403" in m] == warnings_in(logs)
    assert len(warnings_in(logs)) == 1
    # It backs off: with a 0.2 s cap, well under one attempt per 10 ms.
    started, n0 = time.monotonic(), server.connections
    time.sleep(0.6)
    rate = (server.connections - n0) / (time.monotonic() - started)
    assert rate < 30, rate


def test_403_after_a_good_document_forgets_it(fake_server, pipelines, logs):
    """A refusal is the policy's answer (a reload took this uid's access away), not an outage:
    what was granted before goes, and the warning carries the daemon's reason."""
    def forbidden(conn):
        conn.respond(403, b'{"error":"forbidden","message":"uid 1 may not read location data: access.rules entry uid:1=none decides"}',
                     {"content-type": "application/json"})

    server = fake_server(good_stream, forbidden)
    source = follow(server)
    assert source.wait_for_document(5)
    assert wait_until(lambda: dict(source.attributes) == {}, 5)
    p = run_through(server, pipelines, source)
    assert geo(p.span_attributes()) == {}
    refused = [m for m in warnings_in(logs) if "403" in m]
    assert len(refused) == 1 and "access.rules entry uid:1=none decides" in refused[0], refused


def test_a_path_that_is_not_a_socket(workdir, pipelines, logs):
    path = workdir / "not-a-socket"
    path.write_text("hello")
    source = GeoAttrdAttributeSource(str(path), **FAST)
    p = pipelines(source=source)
    for _ in range(50):
        assert geo(p.span_attributes()) == {}
        time.sleep(0.01)
    assert warnings_in(logs) == [f"geoattrd attributes: {path} is not a socket"]
    assert source.running


def test_a_directory_and_a_missing_path(workdir, pipelines, logs):
    for count, path in enumerate((workdir, workdir / "absent.sock"), start=1):
        source = GeoAttrdAttributeSource(str(path), **FAST)
        p = pipelines(source=source)
        assert wait_until(lambda: len(warnings_in(logs)) >= count, 5)
        assert geo(p.span_attributes()) == {}
    assert len(warnings_in(logs)) == 2, warnings_in(logs)


def test_a_socket_nobody_listens_on(workdir, pipelines, logs):
    import socket as socket_module

    path = str(workdir / "dead.sock")
    s = socket_module.socket(socket_module.AF_UNIX)
    s.bind(path)
    s.close()  # the file stays, nothing listens: a daemon that crashed
    source = GeoAttrdAttributeSource(path, **FAST)
    p = pipelines(source=source)
    assert wait_until(lambda: warnings_in(logs), 5)
    assert geo(p.span_attributes()) == {}
    assert len(warnings_in(logs)) == 1 and "nothing listens" in warnings_in(logs)[0]


def test_not_http_at_all(fake_server, pipelines, logs):
    server = fake_server(good_stream, lambda conn: conn.send(b"SSH-2.0-OpenSSH_9.2\r\n\r\n"))
    source = follow(server)
    assert source.wait_for_document(5)
    p = run_through(server, pipelines, source)
    assert geo(p.span_attributes()) == GOOD["attributes"]
    assert len([m for m in warnings_in(logs) if "not HTTP" in m]) == 1


def test_a_server_that_never_answers_is_given_up_on(fake_server, logs):
    server = fake_server(lambda conn: conn.hold())
    source = follow(server, request_timeout=0.2)
    assert wait_until(lambda: server.connections >= 3, 5)
    assert len(warnings_in(logs)) == 1 and "in time" in warnings_in(logs)[0]
    source.shutdown()


def test_an_idle_stream_is_reconnected(fake_server, logs):
    def silent(conn):
        conn.start_stream()
        conn.event(GOOD if conn.server.connections == 1 else NEWER, conn.server.connections)
        conn.hold()  # no heartbeat

    server = fake_server(silent)
    source = follow(server, idle_timeout=0.2)
    assert source.wait_for_document(5)
    assert wait_until(lambda: source.generation == 2, 5)
    assert [m for m in warnings_in(logs) if "no event or heartbeat" in m]
    source.shutdown()


def test_heartbeats_keep_an_idle_stream(fake_server, logs):
    def heartbeats(conn):
        conn.start_stream()
        conn.event(GOOD, 1)
        while not conn.server.stopping.is_set():
            conn.chunk(b": heartbeat\n\n")
            if conn.server.stopping.wait(0.05):
                return

    server = fake_server(heartbeats)
    source = follow(server, idle_timeout=0.3)
    assert source.wait_for_document(5)
    time.sleep(1.0)
    assert server.connections == 1 and warnings_in(logs) == []
    source.shutdown()


def test_polling_when_the_stream_is_not_offered(fake_server, pipelines, logs):
    state = {"doc": GOOD, "etag": '"1-exact"'}

    def old_daemon(conn):
        if conn.target == "/v1/watch":
            conn.respond(404, b'{"error":"not_found","message":"no such endpoint"}')
        elif conn.target == "/v1/attributes?format=json":
            if conn.headers.get("if-none-match") == state["etag"]:
                conn.respond(304, b"", {"etag": state["etag"]})
            else:
                conn.respond(200, json.dumps(state["doc"]).encode(), {"etag": state["etag"], "content-type": "application/json"})
        else:
            conn.respond(400, b"{}")

    server = fake_server(old_daemon)
    source = follow(server, poll_interval=0.05)
    p = pipelines(source=source)
    assert source.wait_for_document(5)
    assert source.mode == "poll"
    assert geo(p.span_attributes()) == GOOD["attributes"]
    assert wait_until(lambda: sum(1 for r in server.requests if r[2].get("if-none-match") == '"1-exact"') >= 3, 5)

    state["doc"], state["etag"] = NEWER, '"2-exact"'
    assert wait_until(lambda: geo(p.span_attributes()) == NEWER["attributes"], 5)
    watch_requests = [r for r in server.requests if r[1] == "/v1/watch"]
    assert len(watch_requests) == 1  # not retried before watch_retry_interval (300 s)
    assert len(warnings_in(logs)) == 1 and "404" in warnings_in(logs)[0]


def test_polling_after_streams_that_keep_breaking(fake_server, pipelines, logs):
    def broken(conn):
        if conn.target == "/v1/watch":
            conn.start_stream()
            conn.end_stream()  # a stream with no event at all
        else:
            conn.respond(200, json.dumps(NEWER).encode(), {"etag": '"2-exact"'})

    server = fake_server(broken)
    source = follow(server, poll_interval=0.05)
    assert source.wait_for_document(5)
    assert source.mode == "poll" and dict(source.attributes) == NEWER["attributes"]
    assert sum(1 for r in server.requests if r[1] == "/v1/watch") == 3
    source.shutdown()


def test_503_no_location_while_polling_is_quiet(fake_server, logs):
    def no_location(conn):
        if conn.target == "/v1/watch":
            conn.respond(404, b"")
        else:
            conn.respond(503, b'{"error":"no_location","message":"no location yet"}')

    server = fake_server(no_location)
    source = follow(server, poll_interval=0.05)
    assert wait_until(lambda: server.connections >= 5, 5)
    assert dict(source.attributes) == {}
    assert len(warnings_in(logs)) == 1  # the 404 that made it poll; the 503s are not failures
    source.shutdown()


def test_odd_values_in_a_document(fake_server):
    odd = {
        "attributes": {
            "geo.location.lat": 47,
            "geo.location.lon": 8,
            "geo.postal_code": "8001",
            "geo.locality.name": None,
            "geo.nested": {"a": 1},
            "not.geo": "x",
        },
        "generation": 3,
        "precision": "exact",
    }

    def stream(conn):
        conn.start_stream()
        conn.event(odd, 3)
        conn.hold()

    server = fake_server(stream)
    source = follow(server)
    assert source.wait_for_document(5)
    assert dict(source.attributes) == {"geo.location.lat": 47.0, "geo.location.lon": 8.0, "geo.postal_code": "8001"}
    assert type(source.attributes["geo.location.lat"]) is float
    source.shutdown()


def test_non_numeric_coordinates_are_refused(fake_server, logs):
    def stream(conn):
        conn.start_stream()
        conn.event(GOOD, 1)
        conn.event({"attributes": {"geo.location.lat": "47", "geo.location.lon": 8}, "generation": 2}, 2)
        conn.event({"attributes": {"geo.location.lat": True, "geo.location.lon": 8}, "generation": 3}, 3)
        conn.hold()

    server = fake_server(stream)
    source = follow(server)
    assert source.wait_for_document(5)
    assert wait_until(lambda: len(warnings_in(logs)) >= 1, 5)
    time.sleep(0.1)
    assert source.generation == 1
    assert len(warnings_in(logs)) == 1
    source.shutdown()
