"""Small islands and shores that Natural Earth's land mask lacks, from DCW-GMT (Debian gmt-dcw).

Natural Earth's 10m coast is generalised: along deltas, fjords and archipelagos it lies more than
the 1 km coast tolerance from the real shore, and it has no small islands, so points on them got
no country (every "inside a country" miss of the accuracy harness was one). DCW keeps every islet
and the shore at 0.1 km vertex spacing, but in full it would quadruple the land layer, and on its
own it does worse than Natural Earth in places (an old 1:1M chart). So the mask is Natural Earth
plus what DCW has beyond it: DCW land further than `coast_km` from Natural Earth land, kept where
people live (within `near_km` of a GeoNames place, the way a map keeps detail where it is used),
simplified to `tolerance_km`.

dcw-gmt.nc is netCDF-4 (HDF5), read with h5py: for each alpha-2 code CC, variables CC_lon and
CC_lat hold uint16 values v meaning `min + v / scale` (attributes), and a row with lon == 65535
starts a ring (lat 0: an outer ring, 1: a hole). Longitudes are in each country's own frame:
the Americas, for one, are stored as 180 to 360 degrees east. The geometry work is shapely's.
"""
import numpy as np


def country_codes(nc):
    return sorted(name[:-4] for name in nc.keys() if len(name) == 6 and name.endswith("_lon") and name[:2].isupper())


def rings(nc, cc):
    """(is_hole, array of (lon, lat)) for each ring of country cc."""
    lon_var, lat_var = nc[cc + "_lon"], nc[cc + "_lat"]
    lon_raw, lat_raw = lon_var[:], lat_var[:]
    lon = lon_var.attrs["min"][0] + lon_raw / lon_var.attrs["scale"][0]
    lat = lat_var.attrs["min"][0] + lat_raw / lat_var.attrs["scale"][0]
    starts = np.flatnonzero(lon_raw == 65535)
    out = []
    for i, start in enumerate(starts):
        end = starts[i + 1] if i + 1 < len(starts) else len(lon_raw)
        if end - start - 1 >= 3:
            out.append((bool(lat_raw[start] == 1), np.column_stack((lon[start + 1:end], lat[start + 1:end]))))
    return out


def simplify(ring, tolerance_km):
    """Douglas-Peucker on a closed ring in a local equirectangular projection (km). An islet
    smaller than the tolerance keeps its two most distant vertices and the one furthest from
    them: it stays land, and the coast tolerance around it does the rest."""
    if np.array_equal(ring[0], ring[-1]):
        ring = ring[:-1]
    n = len(ring)
    if n < 4:
        return ring
    scale = np.array([111.32 * np.cos(np.radians(ring[:, 1].mean())), 110.57])
    xy = ring * scale
    # Split the ring at its first vertex and the vertex furthest from it: two open chains.
    far = int(np.argmax(((xy - xy[0]) ** 2).sum(axis=1)))
    if far == 0:
        return ring[:1]
    keep = np.zeros(n + 1, dtype=bool)
    keep[[0, far, n]] = True
    closed = np.vstack((xy, xy[:1]))
    stack = [(0, far), (far, n)]
    while stack:
        a, b = stack.pop()
        if b - a < 2:
            continue
        p, q = closed[a], closed[b]
        seg = q - p
        pts = closed[a + 1:b] - p
        length = np.hypot(*seg)
        if length == 0:
            dist = np.hypot(pts[:, 0], pts[:, 1])
        else:
            dist = np.abs(pts[:, 0] * seg[1] - pts[:, 1] * seg[0]) / length
        i = int(np.argmax(dist))
        if dist[i] > tolerance_km:
            m = a + 1 + i
            keep[m] = True
            stack.append((a, m))
            stack.append((m, b))
    kept = np.flatnonzero(keep[:n])
    if len(kept) < 3:
        # The vertex furthest from the chord between the two kept ones.
        p, q = xy[0], xy[far]
        seg = q - p
        dist = np.abs((xy[:, 0] - p[0]) * seg[1] - (xy[:, 1] - p[1]) * seg[0])
        kept = np.unique(np.append(kept, int(np.argmax(dist))))
    return ring[kept]


def clip_half_plane(ring, keep_east):
    """Sutherland-Hodgman against the 180th meridian: the part east (x >= 180) or west of it."""
    out = []
    inside = (ring[:, 0] >= 180) if keep_east else (ring[:, 0] <= 180)
    for i in range(len(ring)):
        p, q = ring[i - 1], ring[i]
        pin, qin = inside[i - 1], inside[i]
        if pin != qin:
            t = (180 - p[0]) / (q[0] - p[0])
            out.append((180.0, p[1] + t * (q[1] - p[1])))
        if qin:
            out.append((q[0], q[1]))
    return np.array(out).reshape(-1, 2)


def in_range(ring):
    """The ring in -180..180, cut in two where it crosses the 180th meridian."""
    if ring[:, 0].min() >= 180:
        return [ring - (360, 0)]
    if ring[:, 0].max() <= 180:
        return [ring]
    return [part for part in (clip_half_plane(ring, False), clip_half_plane(ring, True) - (360, 0)) if len(part) >= 3]


def extra_land(dcw_path, ne_features, places, coast_km=0.9, near_km=5.0, tolerance_km=0.5):
    """MultiPolygon coordinates of the DCW land beyond Natural Earth's, and their vertex count.

    ne_features: GeoJSON features of the Natural Earth mask; places: (lon, lat) pairs. Pieces
    keep their outer ring only: a lake inside one is not sea."""
    import h5py
    import shapely
    from shapely.geometry import Polygon, shape

    # Degrees of latitude per km. Away from the equator the same angle is shorter east-west: the
    # Natural Earth cover shrinks there (more DCW land kept, never less) and so does `near_km`.
    degrees = 1 / 111.0
    with h5py.File(dcw_path, "r") as nc:
        pieces = [shapely.make_valid(Polygon(part)) for cc in country_codes(nc) for is_hole, ring in rings(nc, cc)
                  if not is_hole  # the 3 holes are enclaves: land of another country
                  for part in in_range(simplify(ring, min(0.3, tolerance_km))) if len(part) >= 3]
    # One overlay of the dissolved land masses: per-piece differences against continent-sized
    # neighbours took over ten minutes, this about four.
    dcw = shapely.unary_union([piece for piece in pieces if not piece.is_empty])
    ne = [shapely.make_valid(shape(f["geometry"])) for f in ne_features]
    ne_covered = shapely.unary_union([g.buffer(coast_km * degrees, quad_segs=2) for g in ne])
    rest = shapely.difference(dcw, ne_covered)
    leftovers = [part for part in getattr(rest, "geoms", [rest]) if part.geom_type == "Polygon" and not part.is_empty]
    # Of what is left (islands, and shore beyond the tolerance), what is near a place.
    tree = shapely.STRtree(leftovers)
    near = tree.query([shapely.Point(lon, lat) for lon, lat in places], predicate="dwithin", distance=near_km * degrees)
    polygons = []
    vertices = 0
    for i in sorted(set(near[1].tolist())):
        simple = simplify(np.asarray(leftovers[i].exterior.coords), tolerance_km)
        if len(simple) < 3:
            continue
        vertices += len(simple)
        coords = [[round(float(x), 5), round(float(y), 5)] for x, y in simple]
        coords.append(coords[0])
        polygons.append([coords])
    return polygons, vertices
