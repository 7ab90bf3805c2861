"""Putting a snapshot's attributes on a span or a log record, without I/O and without raising."""

from __future__ import annotations

from typing import Any

from ._document import Snapshot


def stamp_span(span: Any, snapshot: Snapshot) -> None:
    """Adds the snapshot's attributes to a span being started, through the SDK's
    ``set_attributes`` (the processor's fast path is inline in ``on_start``). A span that
    already has a ``geo.*`` attribute (set by the application at creation) gets none, so that
    two places are never mixed."""
    existing = span.attributes
    if existing and has_geo(existing):
        return
    span.set_attributes(snapshot.attributes)


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
