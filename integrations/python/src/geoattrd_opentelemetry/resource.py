"""The ``geoattrd`` resource detector (entry point ``opentelemetry_resource_detector``)."""

from __future__ import annotations

import logging
from typing import Optional

from opentelemetry.sdk.resources import Resource, ResourceDetector

from ._document import Snapshot, parse_document
from ._http import MAX_BODY_BYTES, Deadline, Failure, connect, error_code, request, resolve_socket_path, status_failure

_logger = logging.getLogger("geoattrd_opentelemetry")

DEFAULT_TIMEOUT_S = 0.1


def fetch_attributes(socket_path: Optional[str] = None, timeout: float = DEFAULT_TIMEOUT_S) -> Optional[Snapshot]:
    """One ``GET /v1/attributes?format=json`` within ``timeout`` seconds in all. None when the
    daemon has no location yet (503 ``no_location``); raises :class:`Failure` otherwise."""
    path = resolve_socket_path(socket_path)
    deadline = Deadline(timeout)
    sock = connect(path, deadline.remaining())
    try:
        response = request(sock, "GET", "/v1/attributes?format=json", {"Connection": "close"}, deadline)
        body = response.read_body(MAX_BODY_BYTES)
        if response.status == 200:
            return parse_document(body)
        if response.status == 503 and error_code(body) == "no_location":
            return None
        raise status_failure(response.status, body, "/v1/attributes")
    finally:
        sock.close()


class GeoAttrdResourceDetector(ResourceDetector):
    """Detects the device's ``geo.*`` attributes once, when the Resource is made.

    Enable it with ``OTEL_EXPERIMENTAL_RESOURCE_DETECTORS=geoattrd`` (beside others,
    comma-separated). One query with a short timeout (100 ms); an empty Resource when
    geoattrd is absent, has no location yet (503) or refuses this uid (403). A Resource is
    fixed for the process's life: for a device that moves, use the processors instead.
    """

    def __init__(self, raise_on_error: bool = False, *, socket_path: Optional[str] = None, timeout: Optional[float] = None):
        super().__init__(raise_on_error)
        self.socket_path = socket_path
        self.timeout = DEFAULT_TIMEOUT_S if timeout is None else timeout

    def detect(self) -> "Resource":
        try:
            snapshot = fetch_attributes(self.socket_path, self.timeout)
        except Failure as failure:
            if failure.key in ("absent", "http-403"):
                _logger.debug("geoattrd resource detector: %s", failure)
            else:
                _logger.warning("geoattrd resource detector: %s", failure)
            if self.raise_on_error:
                raise
            return Resource.get_empty()
        except Exception as error:  # pylint: disable=broad-except
            _logger.warning("geoattrd resource detector failed: %r", error)
            if self.raise_on_error:
                raise
            return Resource.get_empty()
        if snapshot is None or not snapshot.attributes:
            return Resource.get_empty()
        return Resource(snapshot.attributes)
