"""Border and coast harness: how often an index gives the right country near land borders, band by
band, and whether places on land next to water get their country at all.

Truth (derived at run time, seeded, nothing hand-typed): the full-resolution time-zone polygons of
PyPI timezonefinder-data (OpenStreetMap borders, territorial sea included), each zone's country
from tzdata's zone.tab. The three zones that span two countries are left out (their country needs
another source).

  border  A land border between two countries is where zones of both meet: their shared vertices,
          on land (the fetched land layer). A country pair is drawn at random, then a segment of
          its border weighted by length, a point on it, a side and a distance in the band; the
          point is kept when the truth at it is one of the pair and its exact distance to the
          pair's border (local equirectangular metres) lies in the band.
  coast   GeoNames places within 1 km of the land layer's coastline, inside a country's polygon
          (on land next to water, harbours): a blank answer is a miss. Shown apart: points 3-8 km
          out to sea from them, still inside the polygon (the territorial sea).

Each point is looked up with `geoattrctl lookup --batch --index`; a region code that does not
start with the country's is counted as a contradiction.

Usage (the cache venv, after scripts/fetch-geodata.sh and scripts/build-world-index.sh; installs
nothing: Benchmarks/geocoder/bench.sh puts timezonefinder into the venv):
  cache/geodata/venv/bin/python Benchmarks/geocoder/border_bands.py --index cache/geodata/world.gidx \\
      --geoattrctl .build/release/geoattrctl [--n 3000] [--seed 3636]
"""
import argparse
import collections
import json
import math
import os
import random
import subprocess

import numpy as np
import shapely
import shapely.ops
from shapely import STRtree

from accuracy import MULTI_COUNTRY_ZONES, zone_table

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BANDS = [(0, 50), (50, 100), (100, 250), (250, 500), (500, 1000), (1000, 2000), (2000, 5000)]
METERS_PER_DEGREE = 111_320.0


def load_truth(zone_tab):
    """The zone polygons and their countries, and the borders as segments per country pair."""
    from timezonefinder import TimezoneFinder

    finder = TimezoneFinder(in_memory=True)
    countries = zone_table(zone_tab)
    polygons, polygon_country, polygon_zone = [], [], []
    codes = sorted({c for z, c in countries.items()})
    code_id = {c: i for i, c in enumerate(codes)}
    rings = []  # (country id, int64 keys, coordinates)
    for zone in finder.timezone_names:
        country = countries.get(zone)
        if zone.startswith("Etc/") or zone in MULTI_COUNTRY_ZONES or country is None:
            continue
        for polygon in finder.get_geometry(tz_name=zone, coords_as_pairs=True):
            polygons.append(shapely.Polygon(polygon[0], polygon[1:]))
            polygon_country.append(country)
            polygon_zone.append(zone)
            for ring in polygon:
                xy = np.asarray(ring, dtype=np.float64)
                q = np.rint(xy * 1e6).astype(np.int64)
                rings.append((code_id[country], (q[:, 0] + 180_000_000) * 400_000_000 + (q[:, 1] + 90_000_000), xy))
    # The countries each vertex belongs to; a vertex of exactly two is on their border.
    keys = np.concatenate([r[1] for r in rings])
    owners = np.concatenate([np.full(len(r[1]), r[0], dtype=np.int64) for r in rings])
    pairs = np.unique(np.stack([keys, owners], 1), axis=0)
    unique_keys, first, count = np.unique(pairs[:, 0], return_index=True, return_counts=True)
    two = count == 2
    pair_code = np.full(len(unique_keys), -1, dtype=np.int64)
    pair_code[two] = pairs[first[two], 1] * 1000 + pairs[first[two] + 1, 1]
    segments = collections.defaultdict(list)
    for country, ring_keys, xy in rings:
        code = pair_code[np.searchsorted(unique_keys, ring_keys)]
        # Each border once: from the rings of the pair's first country.
        along = (code[:-1] == code[1:]) & (code[:-1] >= 0) & (code[:-1] // 1000 == country) & (ring_keys[:-1] != ring_keys[1:])
        for i in np.nonzero(along)[0]:
            c = int(code[i])
            segments[(codes[c // 1000], codes[c % 1000])].append((xy[i, 0], xy[i, 1], xy[i + 1, 0], xy[i + 1, 1]))
    return np.asarray(polygons, dtype=object), polygon_country, polygon_zone, segments


def local_distance(lat, lon, segments):
    """Metres from the point to the nearest of segments (x0, y0, x1, y1 in degrees)."""
    scale = math.cos(math.radians(lat))
    s = np.asarray(segments)
    ax, ay = (s[:, 0] - lon) * scale, s[:, 1] - lat
    bx, by = (s[:, 2] - lon) * scale, s[:, 3] - lat
    dx, dy = bx - ax, by - ay
    length = dx * dx + dy * dy
    t = np.clip(np.where(length > 0, -(ax * dx + ay * dy) / np.where(length > 0, length, 1), 0), 0, 1)
    px, py = ax + t * dx, ay + t * dy
    return float(np.sqrt(px * px + py * py).min()) * METERS_PER_DEGREE


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--index", default=os.path.join(ROOT, "cache/geodata/world.gidx"))
    ap.add_argument("--geoattrctl", default=os.path.join(ROOT, ".build/release/geoattrctl"))
    ap.add_argument("--data", default=os.environ.get("GEODATA_CACHE", os.path.join(ROOT, "cache/geodata")))
    ap.add_argument("--n", type=int, default=3000, help="points per band")
    ap.add_argument("--coast", type=int, default=5000, help="places next to water")
    ap.add_argument("--seed", type=int, default=3636)
    ap.add_argument("--misses", help="write the misses here (TSV: set, lat, lon, truth, answer)")
    ap.add_argument("--write-points", help="write the border points within 1 km here (lat,lon lines), for timing lookups")
    a = ap.parse_args()
    rng = random.Random(a.seed)

    polygons, polygon_country, polygon_zone, segments = load_truth(
        os.path.join(a.data, "deb/x_tzdata/usr/share/zoneinfo/zone.tab"))
    # Prepared: a point-in-polygon test on a zone of a million vertices is then a lookup, not a walk.
    shapely.prepare(polygons)
    tree = STRtree(polygons)

    def truth(lat, lon):
        for i in tree.query(shapely.Point(lon, lat)):
            if shapely.contains_xy(polygons[i], lon, lat):
                return polygon_country[i], polygon_zone[i]
        return None, None

    land = np.asarray([shapely.geometry.shape(f["geometry"])
                       for f in json.load(open(os.path.join(a.data, "out/land.geojson")))["features"]], dtype=object)
    shapely.prepare(land)
    land_tree = STRtree(land)

    def inside_land(lon, lat):
        """Whether each point (arrays) lies on land."""
        points, candidates = land_tree.query(shapely.points(lon, lat))
        inside = np.zeros(len(lon), dtype=bool)
        inside[points[shapely.contains_xy(land[candidates], lon[points], lat[points])]] = True
        return inside

    def on_land(lon, lat):
        return bool(inside_land(np.array([lon]), np.array([lat]))[0])

    # Land borders only: a segment whose midpoint is on land.
    land_segments = {}
    for pair, pair_segments in segments.items():
        ends = np.asarray(pair_segments)
        inside = np.nonzero(inside_land((ends[:, 0] + ends[:, 2]) / 2, (ends[:, 1] + ends[:, 3]) / 2))[0]
        if len(inside):
            land_segments[pair] = [pair_segments[i] for i in inside]
    pairs = sorted(land_segments)
    weights = {p: np.cumsum([math.hypot(s[2] - s[0], s[3] - s[1]) for s in land_segments[p]]) for p in pairs}
    segment_tree = {p: STRtree([shapely.LineString([(s[0], s[1]), (s[2], s[3])]) for s in land_segments[p]]) for p in pairs}

    points = []  # (set, lat, lon, truth country, truth zone)
    for low, high in BANDS:
        label = f"{low}-{high} m"
        kept = 0
        while kept < a.n:
            pair = rng.choice(pairs)
            cumulative = weights[pair]
            i = int(np.searchsorted(cumulative, rng.random() * cumulative[-1]))
            x0, y0, x1, y1 = land_segments[pair][min(i, len(cumulative) - 1)]
            t = rng.random()
            lon, lat = x0 + t * (x1 - x0), y0 + t * (y1 - y0)
            scale = max(math.cos(math.radians(lat)), 0.01)
            nx, ny = -(y1 - y0), (x1 - x0) * scale
            norm = math.hypot(nx, ny)
            if norm == 0:
                continue
            d = rng.uniform(low, high) * rng.choice((-1, 1)) / METERS_PER_DEGREE
            lat, lon = lat + d * ny / norm, lon + d * nx / norm / scale
            country, zone = truth(lat, lon)
            if country not in pair:
                continue
            reach = (high + 100) / METERS_PER_DEGREE
            near = segment_tree[pair].query(shapely.box(lon - reach / scale, lat - reach, lon + reach / scale, lat + reach))
            if len(near) == 0:
                continue
            distance = local_distance(lat, lon, [land_segments[pair][j] for j in near])
            if low <= distance < high:
                points.append((label, lat, lon, country, zone))
                kept += 1

    # Places next to water: GeoNames places within 1 km of the land layer's coastline.
    coastline = STRtree(shapely.boundary(land))
    places = []
    for line in open(os.path.join(a.data, "out/cities.txt"), encoding="utf-8"):
        f = line.rstrip("\n").split("\t")
        places.append((float(f[4]), float(f[5])))
    rng.shuffle(places)
    coast_kept = sea_kept = 0
    for lat, lon in places:
        if coast_kept >= a.coast:
            break
        scale = max(math.cos(math.radians(lat)), 0.01)
        nearest = coastline.query_nearest(shapely.Point(lon, lat), max_distance=1000 / METERS_PER_DEGREE / scale)
        if len(nearest) == 0:
            continue
        country, zone = truth(lat, lon)
        if country is None:
            continue
        points.append(("coast: places within 1 km of water", lat, lon, country, zone))
        coast_kept += 1
        # Out to sea, away from the nearest coast point.
        edge = shapely.ops.nearest_points(coastline.geometries[nearest[0]], shapely.Point(lon, lat))[0]
        bearing = math.atan2(lat - edge.y, (lon - edge.x) * scale)
        out = rng.uniform(3000, 8000) / METERS_PER_DEGREE
        sea_lat, sea_lon = lat - out * math.sin(bearing), lon - out * math.cos(bearing) / scale
        if not on_land(sea_lon, sea_lat):
            sea_country, sea_zone = truth(sea_lat, sea_lon)
            if sea_country is not None:
                points.append(("sea: 3-8 km off them, in the polygon", sea_lat, sea_lon, sea_country, sea_zone))
                sea_kept += 1

    query = "".join(f"{p[1]:.7f},{p[2]:.7f}\n" for p in points)
    if a.write_points:
        near = [p for p in points if p[0] in ("0-50 m", "50-100 m", "100-250 m", "250-500 m", "500-1000 m")]
        with open(a.write_points, "w", encoding="utf-8") as f:
            f.write("".join(f"{p[1]:.7f},{p[2]:.7f}\n" for p in near))
    out = subprocess.run([a.geoattrctl, "lookup", "--batch", "--index", a.index], input=query, capture_output=True,
                         text=True, check=True).stdout.splitlines()
    assert len(out) == len(points), f"{len(out)} answers to {len(points)} points"
    rows = collections.OrderedDict()
    misses = []
    for point, line in zip(points, out):
        answer = json.loads(line)
        label, lat, lon, country, zone = point
        got = answer.get("geo.country.iso_code")
        region = answer.get("geo.region.iso_code")
        row = rows.setdefault(label, collections.Counter())
        row["n"] += 1
        row["right"] += got == country
        row["blank"] += got is None
        row["contradiction"] += region is not None and not region.startswith(f"{got}-")
        row["zone"] += answer.get("geo.timezone") == zone
        if got != country:
            misses.append(f"{label}\t{lat:.7f}\t{lon:.7f}\t{country}\t{got}")
    countries = {p[3] for p in points if not p[0].startswith(("coast", "sea"))}
    print(f"index {a.index}; seed {a.seed}; {len(pairs)} country pairs with a land border, points in "
          f"{len(countries)} countries")
    print("| set | points | country right | wrong | blank | region contradicts | time zone right |")
    print("|---|---|---|---|---|---|---|")
    for label, row in rows.items():
        n = row["n"]
        print(f"| {label} | {n} | {100 * row['right'] / n:.2f}% | {n - row['right'] - row['blank']} | {row['blank']} | "
              f"{row['contradiction']} | {100 * row['zone'] / n:.2f}% |")
    if a.misses:
        with open(a.misses, "w", encoding="utf-8") as f:
            f.write("\n".join(misses) + "\n")


if __name__ == "__main__":
    main()
