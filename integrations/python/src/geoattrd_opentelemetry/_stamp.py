"""Putting a snapshot's attributes on a span or a log record, without I/O and without raising."""

from __future__ import annotations

from typing import Any

from opentelemetry.attributes import BoundedAttributes

from ._document import Snapshot


def stamp_span(span: Any, snapshot: Snapshot) -> None:
    """Adds the snapshot's attributes to a span being started. A span that already has a
    ``geo.*`` attribute (set by the application at creation) gets none, so that two places
    are never mixed. The fast path writes into the span's attribute map directly (the
    values were validated once, when the snapshot was made) when the span's limits leave
    room; otherwise it goes through ``set_attributes``."""
    attrs = snapshot.attributes
    bounded = getattr(span, "_attributes", None)
    if (
        type(bounded) is BoundedAttributes
        and getattr(bounded, "_immutable", True) is False
        and (bounded.maxlen is None or len(bounded._dict) + snapshot.count <= bounded.maxlen)
        and (bounded.max_value_len is None or bounded.max_value_len >= snapshot.longest)
    ):
        with bounded._lock:
            existing = bounded._dict
            if existing and has_geo(existing):
                return
            existing.update(attrs)
        return
    existing = span.attributes
    if existing and has_geo(existing):
        return
    span.set_attributes(attrs)


def has_geo(attributes: Any) -> bool:
    for key in attributes:
        if isinstance(key, str) and key.startswith("geo."):
            return True
    return False


def stamp_log_record(log_record: Any, snapshot: Snapshot) -> None:
    """Adds the snapshot's attributes to an SDK log record; one that already has a ``geo.*``
    attribute (from the application) gets none."""
    attrs = log_record.attributes
    if attrs is None or (not attrs and not hasattr(attrs, "__setitem__")):
        log_record.attributes = dict(snapshot.attributes)
        return
    if attrs and has_geo(attrs):
        return
    try:
        for key, value in snapshot.attributes.items():
            attrs[key] = value
    except TypeError:  # an immutable mapping: replace it
        merged = dict(attrs)
        merged.update(snapshot.attributes)
        log_record.attributes = merged
