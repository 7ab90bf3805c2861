"""The log record processor. The logs SDK is the private ``opentelemetry.sdk._logs`` module;
this one adapts to its two shapes: ``emit(LogData)`` (SDK 1.18 to 1.34), ``on_emit(LogData)``
(1.35 to 1.38) and ``on_emit(ReadWriteLogRecord)`` (1.39 on). Each carries the record as
``.log_record``."""

from __future__ import annotations

from typing import Optional

from opentelemetry.sdk._logs import LogRecordProcessor

from ._source import UNSTARTED, GeoAttrdAttributeSource
from ._stamp import stamp_log_record
from .processors import _SourceHolder


class GeoAttrdLogRecordProcessor(_SourceHolder, LogRecordProcessor):
    """Puts the current ``geo.*`` attributes on every log record at emit.

    Register it BEFORE the processor that exports (``BatchLogRecordProcessor`` or
    ``SimpleLogRecordProcessor``): the SDK calls processors in the order they were added,
    and an exporting processor takes the record as it is when its turn comes.
    """

    def __init__(self, socket_path: Optional[str] = None, *, source: Optional[GeoAttrdAttributeSource] = None):
        _SourceHolder.__init__(self, socket_path, source)

    def on_emit(self, log_record) -> None:  # type: ignore[override]
        snapshot = self._source._snapshot
        if not snapshot.count:
            if snapshot is UNSTARTED:
                self._source._start_on_read()
            return
        try:
            stamp_log_record(log_record.log_record, snapshot)
        except Exception:  # never into the application
            pass

    # SDK 1.18 to 1.34 call emit().
    emit = on_emit
