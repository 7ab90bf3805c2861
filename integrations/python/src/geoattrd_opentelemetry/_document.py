"""From geoattrd's JSON attributes document to OpenTelemetry attribute values."""

from __future__ import annotations

import json
import math
from typing import Any, Dict, Mapping, Optional

from ._http import Failure

# The daemon's JSON encoder writes 47.0 as 47: coordinates are always floats here.
_FLOAT_KEYS = frozenset({"geo.location.lat", "geo.location.lon"})


class Snapshot:
    """One document's attributes, immutable once published. Readers take the whole object
    with one attribute load, so they never see half of an update."""

    __slots__ = ("attributes", "count", "longest", "generation", "precision", "source")

    def __init__(
        self,
        attributes: Mapping[str, Any],
        generation: Optional[int] = None,
        precision: Optional[str] = None,
        source: Optional[str] = None,
    ):
        self.attributes: Dict[str, Any] = dict(attributes)
        self.count = len(self.attributes)
        self.longest = max((len(v) for v in self.attributes.values() if isinstance(v, str)), default=0)
        self.generation = generation
        self.precision = precision
        self.source = source


EMPTY = Snapshot({})


def parse_document(data: bytes) -> Snapshot:
    """Parses ``GET /v1/attributes?format=json`` (or one ``/v1/watch`` event's data).

    Only ``geo.*`` keys with scalar values are kept; what the daemon leaves out (below the
    client's precision) stays out. Raises :class:`Failure` on anything malformed."""
    try:
        doc = json.loads(data)
    except (UnicodeDecodeError, ValueError):
        raise Failure("malformed-json", "geoattrd sent malformed JSON; keeping the last attributes") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("attributes"), dict):
        raise Failure("bad-document", "geoattrd sent a document without an attributes object; keeping the last attributes")
    out: Dict[str, Any] = {}
    for key, value in doc["attributes"].items():
        if not isinstance(key, str) or not key.startswith("geo."):
            continue
        if key in _FLOAT_KEYS:
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise Failure("bad-document", f"geoattrd sent a non-numeric {key}; keeping the last attributes")
            value = float(value)
            if not math.isfinite(value):
                raise Failure("bad-document", f"geoattrd sent a non-finite {key}; keeping the last attributes")
            out[key] = value
        elif isinstance(value, (str, bool)):
            out[key] = value
        elif isinstance(value, int):
            out[key] = value
        elif isinstance(value, float) and math.isfinite(value):
            out[key] = value
        # null, lists and objects are not attribute values: left out.
    generation = doc.get("generation")
    precision = doc.get("precision")
    source = doc.get("source")
    return Snapshot(
        out,
        generation if isinstance(generation, int) and not isinstance(generation, bool) else None,
        precision if isinstance(precision, str) else None,
        source if isinstance(source, str) else None,
    )
