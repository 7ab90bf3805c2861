"""The country layer's polygons at the source's own resolution where countries and zones meet.

timezone-boundary-builder's polygons (PyPI timezonefinder-data, not simplified) cover each zone's
land and its territorial sea. A vertex that two or more zones share lies on a border between them;
those are kept exactly, so both sides of every border stay the same line and no gap or overlap
opens between neighbours. A vertex of one zone only lies on the outer line of the territorial sea
(or a shore with no neighbour): there a metre-level line buys nothing, so those runs are simplified
(Douglas-Peucker, their end vertices fixed on the shared border) to SEA_LINE_METERS.
"""
import functools

import numpy as np
import shapely

SEA_LINE_METERS = 100.0
SCALE = 10_000_000  # vertices are compared as integers of 1e-7 degree


def _keys(ring):
    return (ring[:, 0] + 1_800_000_000) * 4_000_000_000 + (ring[:, 1] + 900_000_000)


def _simplified_run(run, tolerance):
    line = shapely.simplify(shapely.LineString(run / SCALE), tolerance, preserve_topology=False)
    return np.rint(shapely.get_coordinates(line) * SCALE).astype(np.int64)


def _simplified_ring(ring, shared, tolerance):
    """The ring with its unshared runs simplified; shared vertices are all kept."""
    if not shared.any():
        closed = shapely.LinearRing(np.vstack([ring, ring[:1]]) / SCALE)
        kept = np.rint(shapely.get_coordinates(shapely.simplify(closed, tolerance, preserve_topology=True)) * SCALE)
        kept = kept.astype(np.int64)[:-1]
        return kept if len(kept) >= 3 else ring
    start = int(np.argmax(shared))  # rotate so the ring starts on a shared vertex
    ring = np.roll(ring, -start, axis=0)
    shared = np.roll(shared, -start)
    n = len(ring)
    pieces = []
    i = 0
    while i < n:
        if shared[i]:
            j = i
            while j + 1 < n and shared[j + 1]:
                j += 1
            pieces.append(ring[i:j + 1])
            i = j + 1
            continue
        j = i
        while j < n and not shared[j]:
            j += 1
        # the run between shared vertices i-1 and j (j == n wraps to the first vertex)
        run = np.vstack([ring[i - 1:i], ring[i:j], ring[j % n:j % n + 1]])
        pieces.append(_simplified_run(run, tolerance)[1:-1])
        i = j
    return np.vstack(pieces)


def zone_polygons(zone_country):
    """Yields (zone, polygons, counts) for every zone that has a country; each polygon is a list of
    rings of (longitude, latitude) in 1e-7 degree integers, open (first vertex not repeated), and
    counts the vertices so far, those kept so far and the shared ones."""
    from timezonefinder import TimezoneFinder

    finder = TimezoneFinder(in_memory=True)
    zones = [z for z in finder.timezone_names if z in zone_country]
    decoded = []
    for zone in zones:
        polygons = []
        for polygon in finder.get_geometry(tz_name=zone, coords_as_pairs=True):
            rings = []
            for ring in polygon:
                a = np.rint(np.asarray(ring, dtype=np.float64) * SCALE).astype(np.int64)
                if len(a) > 1 and (a[0] == a[-1]).all():
                    a = a[:-1]
                if len(a) >= 3:
                    rings.append(a)
            if rings:
                polygons.append(rings)
        decoded.append(polygons)
    # A vertex is shared when it appears in two or more zones.
    keys = np.concatenate([_keys(r) for polygons in decoded for p in polygons for r in p])
    owners = np.concatenate([np.full(len(r), i) for i, polygons in enumerate(decoded) for p in polygons for r in p])
    pairs = np.unique(np.stack([keys, owners], 1), axis=0)
    unique_keys, zone_counts = np.unique(pairs[:, 0], return_counts=True)
    shared = zone_counts[np.searchsorted(unique_keys, keys)] >= 2
    shared_count = int(np.count_nonzero(zone_counts >= 2))
    tolerance = SEA_LINE_METERS / 111_320.0
    before = after = offset = 0
    for zone, polygons in zip(zones, decoded):
        out = []
        for polygon in polygons:
            rings = []
            for ring in polygon:
                simplified = _simplified_ring(ring, shared[offset:offset + len(ring)], tolerance)
                offset += len(ring)
                before += len(ring)
                after += len(simplified)
                rings.append(simplified)
            out.append(rings)
        yield zone, out, (before, after, shared_count)


@functools.cache
def data_source():
    """The border release (timezone-boundary-builder's, as the data states it) and the version of
    the package that carries it (read once: the export's stamp and its sources line both ask)."""
    from importlib.metadata import version

    from timezonefinder import TimezoneFinder

    return TimezoneFinder(in_memory=True).data_version, version("timezonefinder-data")
