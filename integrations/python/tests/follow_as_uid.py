"""Run as another uid by test_access.py: follows the daemon and prints one JSON line each time
what this uid gets changes, until it gets the precision named in argv[2] (or 15 s pass)."""

import json
import sys
import time

from geoattrd_opentelemetry import GeoAttrdAttributeSource

source = GeoAttrdAttributeSource(sys.argv[1], backoff_initial=0.05, backoff_max=0.2)
last = None
deadline = time.monotonic() + 15
while time.monotonic() < deadline:
    now = (source.precision, dict(source.attributes))
    if now != last and now[0] is not None:
        print(json.dumps({"precision": now[0], "attributes": now[1]}), flush=True)
        last = now
        if now[0] == sys.argv[2]:
            break
    time.sleep(0.01)
source.shutdown()
