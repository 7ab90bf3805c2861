"""N points within 1 km of the borders between countries (land and maritime, either side, uniform
in distance from the border line), as `lat,lon` lines on stdout: the border set that the lookup
benchmarks and the back office's comparison use beside the populated and random ones.

    cache/geodata/venv/bin/python Benchmarks/geocoder/border_points.py 1000000 [--seed 37] > border-1m.csv

The borders are the full-resolution polygons' shared vertices (border_bands.load_truth).
"""
import argparse
import os
import sys

import numpy as np

from border_bands import METERS_PER_DEGREE, ROOT, load_truth


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("count", type=int)
    ap.add_argument("--seed", type=int, default=37)
    ap.add_argument("--data", default=os.environ.get("GEODATA_CACHE", os.path.join(ROOT, "cache/geodata")))
    a = ap.parse_args()
    _, _, _, segments = load_truth(os.path.join(a.data, "deb/x_tzdata/usr/share/zoneinfo/zone.tab"))
    s = np.concatenate([np.asarray(pair_segments) for pair_segments in segments.values()])
    scale = np.maximum(np.cos(np.radians((s[:, 1] + s[:, 3]) / 2)), 0.01)
    lengths = np.hypot((s[:, 2] - s[:, 0]) * scale, s[:, 3] - s[:, 1])
    keep = lengths > 0
    s, scale, lengths = s[keep], scale[keep], lengths[keep]
    rng = np.random.default_rng(a.seed)
    pick = np.searchsorted(np.cumsum(lengths), rng.random(a.count) * lengths.sum())
    pick = np.minimum(pick, len(s) - 1)
    x0, y0, x1, y1 = s[pick, 0], s[pick, 1], s[pick, 2], s[pick, 3]
    t = rng.random(a.count)
    lon, lat = x0 + t * (x1 - x0), y0 + t * (y1 - y0)
    # A step across the segment, perpendicular on the ground, of up to 1 km either way.
    nx, ny = -(y1 - y0), (x1 - x0) * scale[pick]
    norm = np.hypot(nx, ny)
    d = rng.uniform(-1000, 1000, a.count) / METERS_PER_DEGREE
    lat = np.clip(lat + d * ny / norm, -90, 90)
    lon = lon + d * nx / norm / scale[pick]
    lon = (lon + 180) % 360 - 180
    sys.stdout.write("".join(f"{y:.7f},{x:.7f}\n" for y, x in zip(lat, lon)))


if __name__ == "__main__":
    main()
