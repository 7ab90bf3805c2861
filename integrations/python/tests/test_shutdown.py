"""Shutdown: the thread stops and is joined promptly whatever it is doing; nothing is left."""

from __future__ import annotations

import os
import threading
import time

from conftest import FAST, document, geoattrd_threads, wait_until

from geoattrd_opentelemetry import GeoAttrdAttributeSource, GeoAttrdSpanProcessor


def timed_shutdown(pipeline_or_source) -> float:
    started = time.monotonic()
    if hasattr(pipeline_or_source, "shutdown") and hasattr(pipeline_or_source, "tracer_provider"):
        pipeline_or_source.shutdown()
    else:
        assert pipeline_or_source.shutdown(5)
    return time.monotonic() - started


def test_shutdown_while_following_a_live_stream(daemon, pipelines):
    # The thread is blocked reading the stream (the default idle timeout is 75 s).
    p = pipelines(daemon.socket)
    assert p.source.wait_for_document(5)
    time.sleep(0.1)
    took = timed_shutdown(p)
    assert took < 0.5, took
    assert geoattrd_threads() == []
    assert not [t for t in threading.enumerate() if t.name.startswith("geoattrd")]


def test_shutdown_during_a_long_backoff(workdir):
    source = GeoAttrdAttributeSource(str(workdir / "absent.sock"), backoff_initial=30, backoff_max=60)
    time.sleep(0.1)  # now waiting out the first backoff
    assert timed_shutdown(source) < 0.5
    assert geoattrd_threads() == []


def test_shutdown_while_waiting_for_an_answer(fake_server):
    server = fake_server(lambda conn: conn.hold())
    source = GeoAttrdAttributeSource(server.path, request_timeout=30)
    assert wait_until(lambda: server.connections >= 1, 5)
    assert timed_shutdown(source) < 0.5
    assert geoattrd_threads() == []


def test_processors_share_one_thread_per_socket_and_release_it(daemon, workdir):
    a = GeoAttrdSpanProcessor(daemon.socket)
    b = GeoAttrdSpanProcessor(daemon.socket)
    c = GeoAttrdSpanProcessor(str(workdir / "other.sock"))
    assert a.source is b.source and a.source is not c.source
    assert len(geoattrd_threads()) == 2
    a.shutdown()
    a.shutdown()  # twice: released once
    assert b.source.running
    b.shutdown()
    c.shutdown()
    assert geoattrd_threads() == []


def test_environment_variable_for_the_socket(daemon, monkeypatch):
    monkeypatch.setenv("GEOATTRD_SOCKET", daemon.socket)
    p = GeoAttrdSpanProcessor()
    try:
        assert p.source.socket_path == daemon.socket
        assert p.source.wait_for_document(5)
    finally:
        p.shutdown()
    monkeypatch.delenv("GEOATTRD_SOCKET")
    q = GeoAttrdSpanProcessor()
    assert q.source.socket_path == "/run/geoattrd/geoattrd.sock"
    q.shutdown()


def test_after_fork_the_child_has_its_own_thread(fake_server):
    docs = iter(range(1, 1000))

    def stream(conn):
        conn.start_stream()
        n = next(docs)
        conn.event(document(10.0 + n, 20.0, generation=n), n)
        conn.hold()

    server = fake_server(stream)
    source = GeoAttrdAttributeSource(server.path, **FAST)
    assert source.wait_for_document(5)
    pid = os.fork()
    if pid == 0:  # the child: exits with a code, never returns into pytest
        code = 1
        try:
            ok = (
                not source.running  # no connection before the first read
                and server.connections == 1
                and dict(source.attributes) == {}  # nothing of the parent's; this read starts the thread
                and source.generation is None
                and wait_until(lambda: source.running and source.generation == 2, 5)
                and source.attributes["geo.location.lat"] == 12.0
                and source.shutdown(2)
            )
            code = 0 if ok else 2
        finally:
            os._exit(code)
    try:
        _, status = os.waitpid(pid, 0)
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
        assert source.generation == 1 and source.running
    finally:
        source.shutdown()


def test_after_fork_the_processors_start_the_childs_thread_on_their_first_read(fake_server, pipelines):
    server = fake_server(lambda conn: (conn.start_stream(), conn.event(document()), conn.hold()))
    p = pipelines(server.path)
    assert p.source.wait_for_document(5)
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            ok = (
                not p.source.running
                and p.span_attributes() == {}  # the first span: nothing, and the thread starts
                and wait_until(lambda: p.source.running and p.source._snapshot.count, 5)
                and p.span_attributes()["geo.location.lat"] == 47.3769
                and p.source.shutdown(2)
            )
            code = 0 if ok else 2
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
    assert p.source.running and server.connections == 2
