"""Span and log record processors that stamp the current ``geo.*`` attributes."""

from __future__ import annotations

from typing import Optional

from opentelemetry.attributes import BoundedAttributes
from opentelemetry.sdk.trace import SpanProcessor

from ._source import UNSTARTED, GeoAttrdAttributeSource, shared_source
from ._stamp import has_geo, stamp_span


class _SourceHolder:
    """The attribute source a processor holds: the process's shared one for the socket, or the
    one passed; released once, at shutdown (the last release stops and joins its thread)."""

    def __init__(self, socket_path: Optional[str], source: Optional[GeoAttrdAttributeSource]):
        if source is None:
            source = shared_source(socket_path)
        else:
            source._retain()
        self._source = source
        self._released = False

    @property
    def source(self) -> GeoAttrdAttributeSource:
        return self._source

    def shutdown(self) -> None:
        if not self._released:
            self._released = True
            self._source._release()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True


class GeoAttrdSpanProcessor(_SourceHolder, SpanProcessor):
    """Puts the current ``geo.*`` attributes on every span at start.

    ``on_start`` reads the in-memory snapshot that the background thread keeps fresh: no
    I/O, no blocking, no exception. While no location is known it adds nothing. All
    processors of a process that use the same socket share one thread (or pass
    ``source=``); it stops, and is joined, when the last of them shuts down.
    """

    def __init__(self, socket_path: Optional[str] = None, *, source: Optional[GeoAttrdAttributeSource] = None):
        _SourceHolder.__init__(self, socket_path, source)

    def on_start(self, span, parent_context=None) -> None:  # type: ignore[override]
        snapshot = self._source._snapshot
        if not snapshot.count:
            if snapshot is UNSTARTED:
                self._source._start_on_read()
            return
        try:
            # The fast path, for every span: the values were validated once, when the
            # snapshot was made, so they go straight into the span's attribute map when its
            # limits leave room (else through set_attributes). No lock: the span is not yet
            # returned to anyone, and one dict update is atomic.
            bounded = span._attributes
            if (
                type(bounded) is BoundedAttributes
                and bounded._immutable is False
                and (bounded.maxlen is None or len(bounded._dict) + snapshot.count <= bounded.maxlen)
                and (bounded.max_value_len is None or bounded.max_value_len >= snapshot.longest)
            ):
                existing = bounded._dict
                if existing and has_geo(existing):
                    return  # the application set its own place
                existing.update(snapshot.attributes)
                return
            stamp_span(span, snapshot)
        except Exception:  # never into the application
            try:
                stamp_span(span, snapshot)
            except Exception:
                pass

    def on_end(self, span) -> None:  # type: ignore[override]
        pass
