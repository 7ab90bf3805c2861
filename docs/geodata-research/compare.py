"""Border-accuracy comparison: NE (qgis-common world_map.gpkg) vs DCW-GMT vs timezonefinder-data (OSM).

For a candidate C: sample random points on C's polygon boundaries, keep those that are land borders
(probes 150 m either side carry two different country labels, both on DCW land), step 0.5-10 km
perpendicular to the border, re-label, verify the distance to the nearest other-country polygon of C
is 0.5-10 km, then label the point with every dataset and report pairwise disagreement.
usage: compare.py [n_points] [seed]
"""
import sys, time, collections, math
import numpy as np, shapely
import geoload

N = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
rng = np.random.default_rng(int(sys.argv[2]) if len(sys.argv) > 2 else 1)


class Layer:
    def __init__(self, name, parts, mapper=lambda c: c):
        self.name = name
        self.labels = np.array([mapper(c) for c, _ in parts], dtype=object)
        self.geoms = np.array([g for _, g in parts], dtype=object)
        keep = np.array([l is not None for l in self.labels])
        self.labels, self.geoms = self.labels[keep], self.geoms[keep]
        self.tree = shapely.STRtree(self.geoms)

    def label(self, lon, lat):
        pts = shapely.points(lon, lat)
        pi, gi = self.tree.query(pts, predicate="within")
        out = np.full(len(pts), None, dtype=object)
        out[pi] = self.labels[gi]  # overlaps: last wins (rare)
        return out

    def dist_other_km(self, lon, lat, lab, maxkm=12.0):
        """distance (km) from (lon,lat) to nearest polygon with a different label, and that point."""
        dlat = maxkm / 110.57; dlon = maxkm / (111.32 * max(math.cos(math.radians(lat)), 0.05))
        idx = self.tree.query(shapely.box(lon - dlon, lat - dlat, lon + dlon, lat + dlat))
        idx = [i for i in idx if self.labels[i] != lab]
        if not idx:
            return math.inf, None, None
        kx = 111.32 * math.cos(math.radians(lat)); ky = 110.57
        box = (lon - dlon, lat - dlat, lon + dlon, lat + dlat)
        best = (math.inf, None, None)
        for i in idx:
            g = shapely.clip_by_rect(self.geoms[i], *box)
            if g.is_empty:
                continue
            g = shapely.transform(g, lambda c: np.column_stack([(c[:, 0] - lon) * kx, (c[:, 1] - lat) * ky]))
            d = shapely.distance(shapely.Point(0, 0), g)
            if d < best[0]:
                r = shapely.shortest_line(shapely.Point(0, 0), g).coords[1]
                best = (d, (lon + r[0] / kx, lat + r[1] / ky), self.labels[i])
        return best


def boundary_samples(layer, n):
    rings = []
    for g in layer.geoms:
        rings.append(g.exterior); rings.extend(g.interiors)
    rings = np.array(rings, dtype=object)
    L = shapely.length(rings)
    ri = rng.choice(len(rings), size=n, p=L / L.sum())
    s = rng.random(n) * L[ri]
    p1 = shapely.line_interpolate_point(rings[ri], s)
    p2 = shapely.line_interpolate_point(rings[ri], np.minimum(s + 1e-4, L[ri]))
    return shapely.get_coordinates(p1), shapely.get_coordinates(p2)


def sample_points(cand, land, n_target):
    acc = []
    t = time.time()
    while len(acc) < n_target:
        a, b = boundary_samples(cand, 20000)
        lat0 = a[:, 1]; kx = 111.32 * np.cos(np.radians(lat0)); ky = 110.57
        tx = (b[:, 0] - a[:, 0]) * kx; ty = (b[:, 1] - a[:, 1]) * ky
        nrm = np.hypot(tx, ty); ok = nrm > 0
        nx = np.where(ok, -ty / np.where(ok, nrm, 1), 0); ny = np.where(ok, tx / np.where(ok, nrm, 1), 0)
        probe = lambda km: (a[:, 0] + nx * km / kx, a[:, 1] + ny * km / ky)
        l1 = cand.label(*probe(0.15)); l2 = cand.label(*probe(-0.15))
        w1 = land.label(*probe(0.15)); w2 = land.label(*probe(-0.15))
        border = ok & (l1 != None) & (l2 != None) & (l1 != l2) & (w1 != None) & (w2 != None)
        for i in np.flatnonzero(border):
            d = rng.uniform(0.5, 10.0) * (1 if rng.random() < 0.5 else -1)
            qx = a[i, 0] + nx[i] * d / kx[i]; qy = a[i, 1] + ny[i] * d / ky
            if not -180 <= qx <= 180:
                continue
            lab = cand.label([qx], [qy])[0]
            if lab is None or land.label([qx], [qy])[0] is None:
                continue
            dist, r, olab = cand.dist_other_km(qx, qy, lab)
            if not 0.5 <= dist <= 10.0:
                continue
            # the nearest other-country area must be land (not territorial sea of a neighbour)
            vx, vy = (r[0] - qx) * kx[i], (r[1] - qy) * ky; vn = math.hypot(vx, vy)
            rx, ry = r[0] + vx / vn * 0.3 / kx[i], r[1] + vy / vn * 0.3 / ky
            if land.label([rx], [ry])[0] is None:
                continue
            acc.append((qx, qy, dist))
            if len(acc) >= n_target:
                break
    print(f"  sampled {len(acc)} points from {cand.name} borders in {time.time()-t:.0f}s", flush=True)
    return np.array(acc)


def main():
    t = time.time()
    ne = Layer("NE", geoload.load_ne(), lambda c: None if c is None else ("DISPUTED" if c == "-1" else c))
    dcw = Layer("DCW", geoload.load_dcw())
    z2c = geoload.zone_to_cc()
    tz = Layer("TZ", geoload.load_tz(), lambda z: z2c.get(z))
    print(f"loaded in {time.time()-t:.0f}s", flush=True)
    layers = [ne, dcw, tz]
    for cand in (tz, dcw, ne):
        pts = sample_points(cand, dcw, N)
        labs = {l.name: l.label(pts[:, 0], pts[:, 1]) for l in layers}
        print(f"== points 0.5-10 km from {cand.name} land borders: n={len(pts)}, median dist {np.median(pts[:,2]):.2f} km")
        for i, x in enumerate(layers):
            for y in layers[i + 1:]:
                lx, ly = labs[x.name], labs[y.name]
                both = (lx != None) & (ly != None)
                dis = both & (lx != ly)
                pairs = collections.Counter(f"{p}/{q}" for p, q in zip(lx[dis], ly[dis]))
                print(f"  {x.name} vs {y.name}: disagree {dis.sum()}/{both.sum()} = {100*dis.sum()/max(both.sum(),1):.2f}%"
                      f"  (no label in {x.name}: {(lx == None).sum()}, in {y.name}: {(ly == None).sum()})"
                      f"  top: {pairs.most_common(8)}")
        for near in (2.0,):
            m = pts[:, 2] <= near
            lx, ly = labs["NE"], labs["TZ"]
            both = m & (lx != None) & (ly != None)
            print(f"  NE vs TZ within {near} km: {100*(both & (lx != ly)).sum()/max(both.sum(),1):.2f}% of {both.sum()}")
        np.savetxt(f"points_{cand.name}.csv", np.column_stack([pts, *[labs[l.name] for l in layers]]), fmt="%s",
                   delimiter=",", header="lon,lat,dist_km,NE,DCW,TZ", comments="")


main()
