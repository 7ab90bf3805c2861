"""Prefork servers: a worker forked from a root parent that then drops privileges to a uid at
`country` gets what the daemon grants that uid, new fixes included, and never the parent's
attributes. The parent is this (root) process, with a pipeline following the real daemon; the
worker is a fork of it that sets its groups, gid and uid as a prefork server's workers do."""

from __future__ import annotations

import json
import os
import select
import time

import pytest
from conftest import geo, wait_until

COUNTRY_UID = 65534  # nobody (and nogroup)
PARIS = (48.8566, 2.3522)
# What a uid at `country` must never get.
FINER_THAN_COUNTRY = ("geo.location.", "geo.postal_code", "geo.locality.", "geo.region.")

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to fork a worker that drops privileges")


def finer_than_country(attributes) -> list:
    return sorted(k for k in attributes if k.startswith(FINER_THAN_COUNTRY))


def drop_privileges(uid: int) -> None:
    os.setgroups([])
    os.setgid(uid)
    os.setuid(uid)


class Lines:
    """JSON lines through a pipe, read with a time bound."""

    def __init__(self, fd: int):
        self.fd = fd
        self.buf = b""

    def get(self, timeout: float):
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.fd], [], [], left)[0]:
                return None
            data = os.read(self.fd, 65536)
            if not data:
                return None
            self.buf += data
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)


def say(fd: int, message) -> None:
    os.write(fd, json.dumps(message).encode() + b"\n")


class Worker:
    """The child's side: reads what the application would (spans, log records, the source) and
    notes every attribute finer than `country`."""

    def __init__(self, pipeline):
        self.p = pipeline
        self.source = pipeline.source
        self.leaks: list = []
        self.precisions: set = set()
        self.clean_since = None

    def look(self) -> None:
        for where, attributes in (
            ("span", geo(self.p.span_attributes())),
            ("log", geo(self.p.log_attributes())),
            ("source", dict(self.source.attributes)),
        ):
            finer = finer_than_country(attributes)
            if finer:
                self.leaks.append([where, self.source.precision, self.source.generation, finer])
                self.clean_since = None
            elif self.clean_since is None:
                self.clean_since = time.monotonic()
        self.precisions.add(self.source.precision)

    def look_until(self, predicate, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.look()
            if predicate():
                return True
            time.sleep(0.005)
        return False

    def follow_a_new_fix(self, to_parent: int, from_parent: Lines) -> dict:
        """Waits (a while) for the `country` grant, asks the parent for a new fix, and follows
        it, whatever it got."""
        got_country = self.look_until(lambda: self.source.precision == "country", 5)
        say(to_parent, {"ready": True, "generation": self.source.generation})
        new_generation = None
        deadline = time.monotonic() + 20
        while new_generation is None and time.monotonic() < deadline:
            self.look()
            message = from_parent.get(0.005)
            if message is not None:
                new_generation = message["generation"]
        if new_generation is None:
            return {"error": "the parent sent no generation"}
        followed = self.look_until(lambda: (self.source.generation or 0) >= new_generation, 10)
        self.look_until(lambda: False, 0.3)
        return {
            "got_country": got_country,
            "followed": followed,
            "generation": self.source.generation,
            "new_generation": new_generation,
            "late_leaks": [leak for leak in self.leaks if (leak[2] or 0) >= new_generation][:5],
        }


def run_worker(pipeline, read_before_drop: bool):
    """Forks the worker; returns its pid, its reports' reader and the two pipe ends to close."""
    to_parent_r, to_parent_w = os.pipe()
    to_child_r, to_child_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the worker: exits with a code, never returns into pytest
        code = 1
        try:
            os.close(to_parent_r)
            os.close(to_child_w)
            worker = Worker(pipeline)
            start = {}
            if read_before_drop:
                start["root_span"] = geo(pipeline.span_attributes())
                start["root_document"] = worker.source.wait_for_document(5)
                start["root_precision"] = worker.source.precision
            drop_privileges(COUNTRY_UID)
            dropped_at = time.monotonic()
            start["first_span"] = geo(pipeline.span_attributes())
            start["first_log"] = geo(pipeline.log_attributes())
            say(to_parent_w, start)
            report = worker.follow_a_new_fix(to_parent_w, Lines(to_child_r))
            report.update(
                leaks=worker.leaks[:20],
                leak_count=len(worker.leaks),
                precisions=sorted(str(p) for p in worker.precisions),
                clean_after=None if worker.clean_since is None else worker.clean_since - dropped_at,
                uid=os.geteuid(),
            )
            say(to_parent_w, report)
            code = 0
        except BaseException as error:
            try:
                say(to_parent_w, {"error": repr(error)})
            except BaseException:
                pass
        finally:
            os._exit(code)
    os.close(to_parent_w)
    os.close(to_child_r)
    return pid, Lines(to_parent_r), to_child_w, to_parent_r


def exchange(daemon, pid: int, from_child: Lines, to_child: int) -> tuple:
    try:
        start = from_child.get(15)
        assert start is not None and "error" not in start, (start, daemon.log())
        ready = from_child.get(15)
        assert ready is not None and ready.get("ready"), (ready, daemon.log())
        # A new fix, at a new place, while the worker follows the daemon.
        doc = daemon.move_to(*PARIS)
        assert doc["generation"] > (ready["generation"] or 0), doc
        say(to_child, {"generation": doc["generation"]})
        report = from_child.get(30)
        assert report is not None, daemon.log()
        _, status = os.waitpid(pid, 0)
        pid = 0
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, (status, report)
        return start, report
    finally:
        if pid:
            try:
                os.kill(pid, 9)
                os.waitpid(pid, 0)
            except OSError:
                pass


def worker_report(daemon, pipeline, read_before_drop: bool):
    """Forks a worker from this (root) process, runs it through a new fix and returns what it
    said at its start and at its end."""
    pid, from_child, to_child, from_child_fd = run_worker(pipeline, read_before_drop=read_before_drop)
    try:
        start, report = exchange(daemon, pid, from_child, to_child)
    finally:
        os.close(to_child)
        os.close(from_child_fd)
    assert "error" not in report, report
    return start, report


def check_parent_unchanged(pipeline) -> None:
    # The root parent still gets the exact place, the new one included.
    assert pipeline.source.running and pipeline.source.precision == "exact"
    assert wait_until(lambda: geo(pipeline.span_attributes()).get("geo.location.lat") == PARIS[0], 5)


def test_a_worker_that_drops_privileges_after_fork_gets_only_its_grant(make_daemon, pipelines):
    d = make_daemon(rules=(f"uid:{COUNTRY_UID}=country",)).start()
    p = pipelines(d.socket)
    assert p.source.wait_for_document(5) and p.source.precision == "exact"
    assert "geo.location.lat" in geo(p.span_attributes())

    start, report = worker_report(d, p, read_before_drop=False)
    assert report["uid"] == COUNTRY_UID
    outcome = {
        # Nothing inherited from the parent: the worker's first span and log record have no geo.*.
        "first_span": start["first_span"],
        "first_log": start["first_log"],
        # Its own grant, across the new fix, and never anything finer.
        "got_country": report["got_country"],
        "followed": report["followed"],
        "late_leaks": report["late_leaks"],
        "leaks": report["leaks"][:3],
        "precisions": [p for p in report["precisions"] if p != "None"],
    }
    assert outcome == {
        "first_span": {},
        "first_log": {},
        "got_country": True,
        "followed": True,
        "late_leaks": [],
        "leaks": [],
        "precisions": ["country"],
    }, report["leak_count"]
    check_parent_unchanged(p)


def test_a_worker_that_read_before_dropping_privileges_switches_grant(make_daemon, pipelines):
    """The worker reads (and so connects) while still root, then drops privileges: the
    background thread notices, drops what it has and reconnects with the new credentials."""
    d = make_daemon(rules=(f"uid:{COUNTRY_UID}=country",)).start()
    p = pipelines(d.socket)
    assert p.source.wait_for_document(5) and p.source.precision == "exact"

    start, report = worker_report(d, p, read_before_drop=True)
    outcome = {
        # Still root at its first read: nothing inherited, then root's own grant.
        "root_span": start["root_span"],
        "root_precision": start["root_document"] and start["root_precision"],
        # Then the worker's grant, within the thread's credential check, and nothing finer after.
        "got_country": report["got_country"],
        "followed": report["followed"],
        "late_leaks": report["late_leaks"],
        "clean_within_2.5_s": report["clean_after"] is not None and report["clean_after"] < 2.5,
    }
    assert outcome == {
        "root_span": {},
        "root_precision": "exact",
        "got_country": True,
        "followed": True,
        "late_leaks": [],
        "clean_within_2.5_s": True,
    }, report
    check_parent_unchanged(p)


def test_a_process_whose_effective_uid_changes_gets_the_new_grant_within_the_check_interval(make_daemon, pipelines):
    """No fork: this process switches its effective uid and gid to nobody and back (root may)
    while the thread follows the stream; each way the thread reconnects for the new grant."""
    d = make_daemon(rules=(f"uid:{COUNTRY_UID}=country",)).start()
    p = pipelines(d.socket)
    assert p.source.wait_for_document(5) and p.source.precision == "exact"
    groups = os.getgroups()
    try:
        os.setgroups([])
        os.setegid(COUNTRY_UID)
        os.seteuid(COUNTRY_UID)
        changed = time.monotonic()
        # Within the check interval (1 s by default): the coordinates are gone.
        assert wait_until(lambda: not finer_than_country(geo(p.span_attributes())), 2.5)
        cleared_after = time.monotonic() - changed
        assert wait_until(lambda: p.source.precision == "country", 5)
        assert finer_than_country(geo(p.span_attributes())) == []
    finally:
        os.seteuid(0)
        os.setegid(0)
        os.setgroups(groups)
    assert cleared_after < 2.0, cleared_after
    assert wait_until(lambda: p.source.precision == "exact", 5)
    assert geo(p.span_attributes())["geo.location.lat"] == 47.3769
