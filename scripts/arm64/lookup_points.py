#!/usr/bin/env python3
"""Points for comparing two builds' lookups, as `lookup --batch` reads them ("LAT,LON" lines).

    lookup_points.py SOURCES COUNT [SEED] > points

SOURCES is the directory of fetched geodata (scripts/fetch-geodata.sh's out/: countries.geojson,
cities.txt). COUNT points in three kinds, in about equal parts:
  - uniform over the sphere, where most answers are the sea or one country's interior;
  - populated places (GeoNames cities), each moved by up to 2 km, where localities and postal
    codes are decided;
  - within 1 km of a land border: a vertex two countries' polygons share, moved by up to 1 km,
    where the point-in-polygon test and boundary_margin_m are closest to their edge cases.
Seeded: the same arguments give the same points, so a difference can be looked at again.
"""

import json
import math
import random
import sys
from pathlib import Path

EARTH_RADIUS_M = 6_371_008.8


def rings(geometry):
    kind = geometry["type"]
    polygons = [geometry["coordinates"]] if kind == "Polygon" else geometry["coordinates"]
    for polygon in polygons:
        yield from polygon


def shared_border_vertices(countries_path):
    """Vertices that belong to two or more countries: points on a land border."""
    owners = {}
    for feature in json.loads(countries_path.read_text())["features"]:
        # A country may come in several features (one per time zone); their shared edges are no border.
        code = feature["properties"]["country"]
        for ring in rings(feature["geometry"]):
            for lon, lat, *_ in ring:
                key = (round(lat, 6), round(lon, 6))
                seen = owners.setdefault(key, code)
                if seen != code:
                    owners[key] = None
    return sorted(key for key, owner in owners.items() if owner is None)


def populated_places(cities_path):
    places = []
    with cities_path.open(encoding="utf-8") as cities:
        for line in cities:
            fields = line.split("\t")
            if len(fields) > 5:
                places.append((float(fields[4]), float(fields[5])))
    return places


def moved(rng, lat, lon, max_metres):
    """A point at a uniform distance up to max_metres from (lat, lon), in a uniform direction."""
    distance = max_metres * math.sqrt(rng.random()) / EARTH_RADIUS_M
    bearing = 2 * math.pi * rng.random()
    phi, lam = math.radians(lat), math.radians(lon)
    phi2 = math.asin(math.sin(phi) * math.cos(distance) + math.cos(phi) * math.sin(distance) * math.cos(bearing))
    lam2 = lam + math.atan2(math.sin(bearing) * math.sin(distance) * math.cos(phi),
                            math.cos(distance) - math.sin(phi) * math.sin(phi2))
    lon2 = (math.degrees(lam2) + 540) % 360 - 180
    return math.degrees(phi2), lon2


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit("usage: lookup_points.py SOURCES COUNT [SEED]")
    sources, count = Path(sys.argv[1]), int(sys.argv[2])
    rng = random.Random(int(sys.argv[3]) if len(sys.argv) == 4 else 1)
    borders = shared_border_vertices(sources / "countries.geojson")
    places = populated_places(sources / "cities.txt")
    if not borders or not places:
        sys.exit(f"lookup-points: {sources} has no shared border vertices or no places")
    third = count // 3
    out = sys.stdout
    for _ in range(count - 2 * third):
        z = 2 * rng.random() - 1
        out.write(f"{math.degrees(math.asin(z)):.6f},{360 * rng.random() - 180:.6f}\n")
    for _ in range(third):
        out.write("%.6f,%.6f\n" % moved(rng, *rng.choice(places), 2000))
    for _ in range(third):
        out.write("%.6f,%.6f\n" % moved(rng, *rng.choice(borders), 1000))
    print(f"lookup-points: {count} points ({count - 2 * third} uniform, {third} near {len(places)} places, "
          f"{third} within 1 km of {len(borders)} border vertices)", file=sys.stderr)


if __name__ == "__main__":
    main()
