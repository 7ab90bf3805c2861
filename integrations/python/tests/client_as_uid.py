"""Run as another uid (through setpriv) by test_access.py: what does that uid's application
get? Prints one JSON object."""

import json
import logging
import sys

records = []


class Collect(logging.Handler):
    def emit(self, record):
        records.append(record.getMessage())


logging.getLogger("geoattrd_opentelemetry").addHandler(Collect())
logging.getLogger("geoattrd_opentelemetry").setLevel(logging.INFO)

from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402

from geoattrd_opentelemetry import GeoAttrdAttributeSource, GeoAttrdSpanProcessor  # noqa: E402
from geoattrd_opentelemetry.resource import GeoAttrdResourceDetector  # noqa: E402

socket_path = sys.argv[1]
source = GeoAttrdAttributeSource(socket_path, backoff_initial=0.05, backoff_max=0.2)
exporter = InMemorySpanExporter()
provider = TracerProvider()
provider.add_span_processor(GeoAttrdSpanProcessor(source=source))
provider.add_span_processor(SimpleSpanProcessor(exporter))
import time  # noqa: E402

deadline = time.monotonic() + 5
while not source.wait_for_document(0.02) and not records and time.monotonic() < deadline:
    pass
got_document = source.wait_for_document(0)
if not got_document:
    time.sleep(0.3)  # several more attempts: still one log line
with provider.get_tracer("t").start_as_current_span("op"):
    pass
resource = GeoAttrdResourceDetector(socket_path=socket_path, timeout=1.0).detect()
provider.shutdown()
print(
    json.dumps(
        {
            "document": got_document,
            "precision": source.precision,
            "span": dict(exporter.get_finished_spans()[-1].attributes),
            "resource": dict(resource.attributes),
            "logs": records,
            "thread_left": source.running,
        }
    )
)
