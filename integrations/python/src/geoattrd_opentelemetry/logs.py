"""The log record processor. The logs SDK is the private ``opentelemetry.sdk._logs`` module;
this one adapts to its two shapes: ``emit(LogData)`` (SDK 1.18 to 1.34), ``on_emit(LogData)``
(1.35 to 1.38) and ``on_emit(ReadWriteLogRecord)`` (1.39 on). Each carries the record as
``.log_record``."""

from __future__ import annotations

from typing import Optional

from opentelemetry.sdk._logs import LogRecordProcessor

from ._source import GeoAttrdAttributeSource
from ._stamp import stamp_log_record
from .processors import _acquire


class GeoAttrdLogRecordProcessor(LogRecordProcessor):
    """Puts the current ``geo.*`` attributes on every log record at emit.

    Register it BEFORE the processor that exports (``BatchLogRecordProcessor`` or
    ``SimpleLogRecordProcessor``): the SDK calls processors in the order they were added,
    and an exporting processor takes the record as it is when its turn comes.
    """

    def __init__(self, socket_path: Optional[str] = None, *, source: Optional[GeoAttrdAttributeSource] = None):
        self._source = _acquire(socket_path, source)
        self._released = False

    @property
    def source(self) -> GeoAttrdAttributeSource:
        return self._source

    def on_emit(self, log_record) -> None:  # type: ignore[override]
        snapshot = self._source._snapshot
        if not snapshot.count:
            return
        try:
            stamp_log_record(log_record.log_record, snapshot)
        except Exception:  # never into the application
            pass

    # SDK 1.18 to 1.34 call emit().
    emit = on_emit

    def shutdown(self) -> None:
        if not self._released:
            self._released = True
            self._source._release()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True
