"""For each timezonefinder-data land zone: share of random interior points that DCW and NE put in another country."""
import numpy as np, shapely, collections, geoload
rng = np.random.default_rng(7)
z2c = geoload.zone_to_cc()
tz = geoload.load_tz()
def layer(parts, f=lambda c: c):
    labs = np.array([f(c) for c, _ in parts], dtype=object); geoms = np.array([g for _, g in parts], dtype=object)
    return labs, geoms, shapely.STRtree(geoms)
def lab(L, x, y):
    labs, geoms, tree = L; out = np.full(len(x), None, dtype=object)
    pi, gi = tree.query(shapely.points(x, y), predicate="within"); out[pi] = labs[gi]; return out
dcw = layer(geoload.load_dcw()); ne = layer(geoload.load_ne(), lambda c: "DISPUTED" if c == "-1" else c)
byzone = collections.defaultdict(list)
for z, g in tz: byzone[z].append(g)
rows = []
for z, gs in byzone.items():
    cc = z2c.get(z)
    if cc is None: continue
    mp = shapely.MultiPolygon(gs) if len(gs) > 1 else gs[0]
    minx, miny, maxx, maxy = mp.bounds; xs = []; ys = []
    prep = shapely.prepare(mp)
    for _ in range(200):
        x = rng.uniform(minx, maxx, 4000); y = rng.uniform(miny, maxy, 4000)
        m = shapely.contains_xy(mp, x, y); xs += list(x[m]); ys += list(y[m])
        if len(xs) >= 1000: break
    xs, ys = np.array(xs[:1000]), np.array(ys[:1000])
    if len(xs) == 0: continue
    ld, ln = lab(dcw, xs, ys), lab(ne, xs, ys)
    land = (ld != None) & (ln != None)
    if land.sum() < 20: continue
    other = land & (ld != cc) & (ln != cc)
    c = collections.Counter(f"{a}|{b}" for a, b in zip(ld[other], ln[other]))
    rows.append((other.sum() / land.sum(), z, cc, int(land.sum()), c.most_common(3)))
rows.sort(reverse=True)
print(f"land zones checked: {len(rows)}; zones with >2% of land points in another country per BOTH DCW and NE: {sum(r[0] > 0.02 for r in rows)}")
for r in rows[:40]:
    print(f"{100*r[0]:6.1f}%  {r[1]:32s} {r[2]}  n={r[3]}  other(DCW|NE)={r[4]}")
