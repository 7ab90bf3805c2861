#!/usr/bin/env python3
"""The cost of GeoAttrdSpanProcessor: a span created and ended with the SDK's defaults
(a TracerProvider with no exporter), without and with the processor, same SDK, same run.

    python bench_span_processor.py                     # snapshot of 7 attributes, no daemon
    python bench_span_processor.py --socket PATH       # the snapshot a running geoattrd serves
    python bench_span_processor.py --check 1.15        # exit 1 if the ratio is above 1.15
    python bench_span_processor.py --loop 100000 --socket PATH   # a plain loop, for strace

Rounds alternate between the two providers; the figures are medians over the rounds.
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import threading
import time

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.version import __version__ as otel_version

from geoattrd_opentelemetry import GeoAttrdAttributeSource, GeoAttrdSpanProcessor
from geoattrd_opentelemetry._document import Snapshot

# What geoattrd serves at `exact` with an index: the most attributes a span gets.
FULL = {
    "geo.location.lat": 47.3769,
    "geo.location.lon": 8.5417,
    "geo.continent.code": "EU",
    "geo.country.iso_code": "CH",
    "geo.region.iso_code": "CH-ZH",
    "geo.locality.name": "Zürich",
    "geo.postal_code": "8001",
}


def make_source(socket_path):
    if socket_path:
        source = GeoAttrdAttributeSource(socket_path)
        if not source.wait_for_document(5):
            source.shutdown()
            sys.exit(f"no attributes from geoattrd at {socket_path} within 5 s")
        return source
    source = GeoAttrdAttributeSource("/nonexistent/geoattrd.sock", start=False)
    source._publish(Snapshot(FULL, generation=1, precision="exact", source="static"))
    return source


def per_span_ns(tracer, n: int) -> float:
    start_span = tracer.start_span
    t0 = time.perf_counter_ns()
    for _ in range(n):
        start_span("op").end()
    return (time.perf_counter_ns() - t0) / n


def bench(args) -> int:
    source = make_source(args.socket)
    plain = TracerProvider(shutdown_on_exit=False)
    stamped = TracerProvider(shutdown_on_exit=False)
    processor = GeoAttrdSpanProcessor(source=source)
    stamped.add_span_processor(processor)
    tracers = {"without": plain.get_tracer("bench"), "with": stamped.get_tracer("bench")}

    span = tracers["with"].start_span("check")
    span.end()
    stamped_count = sum(1 for k in span.attributes if k.startswith("geo."))

    for tracer in tracers.values():  # warm-up
        per_span_ns(tracer, args.spans // 4)
    results = {"without": [], "with": []}
    for r in range(args.rounds):
        order = ("without", "with") if r % 2 == 0 else ("with", "without")
        for name in order:
            gc.collect()
            results[name].append(per_span_ns(tracers[name], args.spans))
    without = statistics.median(results["without"])
    with_ = statistics.median(results["with"])
    ratio = with_ / without
    print(f"opentelemetry-sdk {otel_version}, Python {sys.version.split()[0]}, {args.rounds} rounds of {args.spans} spans")
    print(f"geo.* attributes per span: {stamped_count} ({'geoattrd at ' + args.socket if args.socket else 'seeded snapshot'})")
    print(f"without the processor: {without:8.0f} ns per span (min {min(results['without']):.0f})")
    print(f"with the processor:    {with_:8.0f} ns per span (min {min(results['with']):.0f})")
    print(f"ratio: {ratio:.3f} ({(ratio - 1) * 100:+.1f}%)")
    processor.shutdown()
    source.shutdown()
    if args.check is not None and ratio > args.check:
        print(f"above the target {args.check}", file=sys.stderr)
        return 1
    return 0


def loop(args) -> int:
    """A loop of spans between two markers written to stderr, for strace: the caller's thread
    must make no system call between them."""
    source = make_source(args.socket)
    provider = TracerProvider(shutdown_on_exit=False)
    processor = GeoAttrdSpanProcessor(source=source)
    provider.add_span_processor(processor)
    tracer = provider.get_tracer("bench")
    tracer.start_span("warm-up").end()
    print(f"caller thread {threading.get_native_id()}", flush=True)
    os.write(2, b"geoattrd-bench: loop start\n")
    span = None
    for _ in range(args.loop):
        span = tracer.start_span("op")
        span.end()
    os.write(2, b"geoattrd-bench: loop end\n")
    print(f"spans {args.loop}, geo.* on the last one: {sum(1 for k in span.attributes if k.startswith('geo.'))}", flush=True)
    processor.shutdown()
    source.shutdown()
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--spans", type=int, default=20000, help="spans per round (default 20000)")
    parser.add_argument("--rounds", type=int, default=15, help="rounds per provider (default 15)")
    parser.add_argument("--socket", help="follow this geoattrd instead of a seeded snapshot")
    parser.add_argument("--check", type=float, help="exit 1 when the ratio is above this")
    parser.add_argument("--loop", type=int, help="run a plain loop of this many spans (for strace)")
    args = parser.parse_args()
    return loop(args) if args.loop else bench(args)


if __name__ == "__main__":
    sys.exit(main())
