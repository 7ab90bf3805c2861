"""OpenTelemetry integration for geoattrd: ``geo.*`` attributes on spans, log records and the
Resource, from geoattrd's Unix-socket API.

    from geoattrd_opentelemetry import GeoAttrdSpanProcessor, GeoAttrdLogRecordProcessor
    tracer_provider.add_span_processor(GeoAttrdSpanProcessor())
    logger_provider.add_log_record_processor(GeoAttrdLogRecordProcessor())  # before the exporting one
"""

from ._http import DEFAULT_SOCKET, SOCKET_ENV
from ._source import GeoAttrdAttributeSource
from .processors import GeoAttrdSpanProcessor
from .resource import GeoAttrdResourceDetector

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_SOCKET",
    "SOCKET_ENV",
    "GeoAttrdAttributeSource",
    "GeoAttrdLogRecordProcessor",
    "GeoAttrdResourceDetector",
    "GeoAttrdSpanProcessor",
]


def __getattr__(name):
    # The logs SDK is private (opentelemetry.sdk._logs): imported only when asked for, so that
    # a change there cannot break the span processor or the detector.
    if name == "GeoAttrdLogRecordProcessor":
        from .logs import GeoAttrdLogRecordProcessor

        return GeoAttrdLogRecordProcessor
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
