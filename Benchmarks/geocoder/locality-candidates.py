#!/usr/bin/env python3
"""How many places lie within the locality search's radii of the benchmark points, as it is and
with the large places split into population tiers. Measures the work a finer or tiered place
grid could save; compare with the records the reader reads per lookup (docs/performance.md, "Where the time
goes").

    cache/geodata/venv/bin/python Benchmarks/geocoder/locality-candidates.py \
        [cache/geodata/out/cities.txt] [cache/bench/populated-1m.csv] [points to use]

Counts all GeoNames places of the source, including the ~14,000 the builder drops as never named
(DominatedPlaces), so they are slight overestimates.
"""
import sys

import numpy as np
from scipy.spatial import cKDTree

EARTH_KM = 6371.0
MAJOR_POPULATION = 50_000  # LocalityRule.majorPopulation


def reach_km(population):  # LocalityRule.reach
    return min(1_500 + 25 * population ** 0.5, 40_000) / 1000


def unit_vectors(latitudes, longitudes):
    la, lo = np.radians(latitudes), np.radians(longitudes)
    return np.c_[np.cos(la) * np.cos(lo), np.cos(la) * np.sin(lo), np.sin(la)]


def main():
    cities = sys.argv[1] if len(sys.argv) > 1 else "cache/geodata/out/cities.txt"
    points_file = sys.argv[2] if len(sys.argv) > 2 else "cache/bench/populated-1m.csv"
    count = int(sys.argv[3]) if len(sys.argv) > 3 else 100_000
    latitudes, longitudes, populations = [], [], []
    with open(cities, encoding="utf-8") as source:
        for line in source:
            fields = line.split("\t")
            try:
                population = int(fields[14] or 0)
                latitude, longitude = float(fields[4]), float(fields[5])
            except (IndexError, ValueError):
                continue
            latitudes.append(latitude)
            longitudes.append(longitude)
            populations.append(population)
    places = unit_vectors(latitudes, longitudes)
    population = np.array(populations)
    points = np.loadtxt(points_file, delimiter=",", max_rows=count)
    queries = unit_vectors(points[:, 0], points[:, 1])

    def mean_within(mask, km):
        tree = cKDTree(places[mask])
        chord = 2 * np.sin(km / EARTH_KM / 2)
        return np.mean([len(found) for found in tree.query_ball_point(queries, chord)])

    major = population >= MAJOR_POPULATION
    print(f"{len(population):,} places, {major.sum():,} of at least {MAJOR_POPULATION:,}; {len(points):,} points of {points_file}")
    print(f"as searched: large places within 40 km {mean_within(major, 40):.1f}, "
          f"small within {reach_km(MAJOR_POPULATION - 1):.1f} km {mean_within(~major, reach_km(MAJOR_POPULATION - 1)):.1f}")
    for cut in (200_000, 500_000, 1_000_000):
        lower = major & (population < cut)
        print(f"tier at {cut:,}: below it within {reach_km(cut - 1):.1f} km {mean_within(lower, reach_km(cut - 1)):.1f}, "
              f"above it within 40 km {mean_within(population >= cut, 40):.1f}")


if __name__ == "__main__":
    main()
