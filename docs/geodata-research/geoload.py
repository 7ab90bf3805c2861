"""Loaders for the candidate border datasets (exploration only).

Each loader returns a list of (label, shapely Polygon) parts, label = ISO 3166-1 alpha-2
(or a zone/state id where noted), plus helpers for resolution statistics.
"""
import math, sqlite3, struct, os, collections
import numpy as np
import shapely, shapely.affinity, shapely.geometry
from shapely.geometry import Polygon

BASE = os.path.dirname(os.path.abspath(__file__))
GPKG = f"{BASE}/deb/x_qgis-common/usr/share/qgis/resources/data/world_map.gpkg"
DCW = f"{BASE}/deb/x_gmt-dcw/usr/share/gmt-dcw/dcw-gmt.nc"
ZONETAB = "/usr/share/zoneinfo/zone.tab"


def _gpkg_wkb(blob):
    flags = blob[3]
    env = {0: 0, 1: 32, 2: 48, 3: 48, 4: 64}[(flags >> 1) & 7]
    return blob[8 + env:]


def load_ne(layer="countries", col="iso_a2"):
    con = sqlite3.connect(GPKG)
    gcol = con.execute("select column_name from gpkg_geometry_columns where table_name=?", (layer,)).fetchone()[0]
    parts = []
    for code, blob in con.execute(f'select "{col}", "{gcol}" from "{layer}"'):
        if blob is None:
            continue
        g = shapely.from_wkb(_gpkg_wkb(blob))
        for p in getattr(g, "geoms", [g]):
            parts.append((code, p))
    return parts


def load_dcw(countries_only=True):
    """DCW-GMT: per item <CODE>_lon/<CODE>_lat uint16 arrays; value = min + v/scale.
    A row with lon==65535 starts a new ring; its lat is 0 for an outer ring, 1 for a hole."""
    import netCDF4 as nc
    d = nc.Dataset(DCW)
    d.set_auto_maskandscale(False)
    parts = []
    for v in d.variables:
        if not v.endswith("_lon"):
            continue
        code = v[:-4]
        if countries_only and len(code) != 2:
            continue
        vx, vy = d.variables[v], d.variables[code + "_lat"]
        x = vx[:].astype(np.int64); y = vy[:].astype(np.int64)
        lon = vx.getncattr("min") + x / vx.getncattr("scale")
        lat = vy.getncattr("min") + y / vy.getncattr("scale")
        sep = np.flatnonzero(x == 65535)
        bounds = list(sep) + [len(x)]
        shells, holes = [], []
        for i in range(len(sep)):
            a, b = bounds[i] + 1, bounds[i + 1]
            if b - a < 3:
                continue
            ring = np.column_stack([lon[a:b], lat[a:b]])
            (holes if y[bounds[i]] == 1 else shells).append(ring)
        polys = [shapely.make_valid(Polygon(r)) for r in shells]
        hpolys = [Polygon(r) for r in holes]
        for p in polys:
            if hpolys:
                p = p.difference(shapely.union_all(hpolys))
            for q in getattr(p, "geoms", [p]):
                if q.geom_type == "Polygon" and not q.is_empty:
                    parts.append((code, q))
                    # some items are stored in 0..360 longitudes: add a -360 copy for queries
                    if q.bounds[2] > 180:
                        parts.append((code, shapely.affinity.translate(q, -360)))
    return parts


def zone_to_cc():
    m = {}
    for line in open(ZONETAB):
        if line.startswith("#"):
            continue
        f = line.rstrip("\n").split("\t")
        m[f[2]] = f[0]
    return m


def load_tz():
    """timezonefinder-data polygons (timezone-boundary-builder, OSM-derived). label = zone name."""
    from timezonefinder import TimezoneFinder
    tf = TimezoneFinder()
    parts = []
    for zid, name in enumerate(tf.timezone_names):
        for poly in tf.get_geometry(tz_id=zid, use_id=True):
            shell = list(zip(*poly[0]))
            holes = [list(zip(*h)) for h in poly[1:]]
            parts.append((name, Polygon(shell, holes)))
    return parts


def hav_km(lon1, lat1, lon2, lat2):
    lon1, lat1, lon2, lat2 = map(np.radians, (lon1, lat1, lon2, lat2))
    a = np.sin((lat2 - lat1) / 2) ** 2 + np.cos(lat1) * np.cos(lat2) * np.sin((lon2 - lon1) / 2) ** 2
    return 2 * 6371.0088 * np.arcsin(np.sqrt(np.minimum(a, 1)))


def ring_stats(parts):
    """vertex count (closing vertex not counted), ring count, segment lengths (km)."""
    nv = nr = 0
    segs = []
    for _, p in parts:
        for r in [p.exterior, *p.interiors]:
            c = np.asarray(r.coords)
            nv += len(c) - 1; nr += 1
            segs.append(hav_km(c[:-1, 0], c[:-1, 1], c[1:, 0], c[1:, 1]))
    s = np.concatenate(segs)
    return nv, nr, s


def load_tzfpy():
    """tzfpy embedded (simplified, DP eps 0.001 deg) timezone polygons. label = zone name."""
    import json, tzfpy
    parts = []
    for name in tzfpy.timezonenames():
        gj = json.loads(tzfpy.get_tz_polygon_geojson(name))
        geoms = [f["geometry"] for f in gj.get("features", [gj])] if gj.get("type") == "FeatureCollection" else [gj.get("geometry", gj)]
        for g in geoms:
            s = shapely.geometry.shape(g)
            for p in getattr(s, "geoms", [s]):
                parts.append((name, p))
    return parts
