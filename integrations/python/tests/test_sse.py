"""The Server-Sent Events parser and the document parser, alone."""

from __future__ import annotations

import pytest

from geoattrd_opentelemetry._document import parse_document
from geoattrd_opentelemetry._http import EventTooLarge, Failure, SSEParser

STREAM = (
    b": heartbeat\n\n"
    b"id: 1\nevent: attributes\ndata: {\"a\":\n"
    b"data: 1}\n\n"
    b"retry: 10\nunknown: x\n\n"
    b"data:no space\n\n"
)
EXPECTED = [("attributes", '{"a":\n1}', "1"), ("message", "no space", None)]


@pytest.mark.parametrize("eol", [b"\n", b"\r\n", b"\r"])
def test_line_ends_and_every_split(eol):
    data = STREAM.replace(b"\n", eol)
    whole = SSEParser().feed(data)
    assert whole == EXPECTED
    for cut in range(len(data) + 1):
        parser = SSEParser()
        assert parser.feed(data[:cut]) + parser.feed(data[cut:]) == EXPECTED, cut
    parser = SSEParser()
    assert [e for i in range(len(data)) for e in parser.feed(data[i : i + 1])] == EXPECTED


def test_comments_are_counted_and_not_events():
    parser = SSEParser()
    assert parser.feed(b": heartbeat\n\n: heartbeat\n\n") == []
    assert parser.comments == 2 and not parser.mid_event


def test_an_unfinished_event_is_never_returned():
    parser = SSEParser()
    assert parser.feed(b"event: attributes\ndata: {}\n") == []
    assert parser.mid_event
    parser = SSEParser()
    assert parser.feed(b"event: attri") == [] and parser.mid_event


def test_the_size_cap():
    parser = SSEParser(max_event_bytes=100)
    parser.feed(b"data: " + b"x" * 80 + b"\n")
    with pytest.raises(EventTooLarge):
        parser.feed(b"data: " + b"x" * 30 + b"\n")
    with pytest.raises(EventTooLarge):
        SSEParser(max_event_bytes=100).feed(b"x" * 101)
    # Exactly at the cap is fine.
    assert SSEParser(max_event_bytes=10).feed(b"data: 123\n\n") == [("message", "123", None)]


def test_parse_document():
    snap = parse_document(b'{"attributes":{"geo.location.lat":47,"geo.location.lon":8.5,"geo.country.iso_code":"CH"},'
                          b'"generation":5,"precision":"exact"}')
    assert snap.attributes == {"geo.location.lat": 47.0, "geo.location.lon": 8.5, "geo.country.iso_code": "CH"}
    assert type(snap.attributes["geo.location.lat"]) is float
    assert snap.generation == 5 and snap.precision == "exact" and snap.count == 3 and snap.longest == 2
    assert parse_document(b'{"attributes":{}}').attributes == {}
    for bad, key in [
        (b"{", "malformed-json"),
        (b"\xff\xfe", "malformed-json"),
        (b"[]", "bad-document"),
        (b'{"attributes":[]}', "bad-document"),
        (b'{"attributes":{"geo.location.lat":"1"}}', "bad-document"),
        (b'{"attributes":{"geo.location.lat":1e999}}', "bad-document"),
    ]:
        with pytest.raises(Failure) as info:
            parse_document(bad)
        assert info.value.key == key, bad
