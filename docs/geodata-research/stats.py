"""Resolution stats for each candidate: vertices, rings, median segment km."""
import sys, time, numpy as np, geoload
which = sys.argv[1:] or ["ne", "ne_states", "dcw", "dcw_states", "tz"]
for w in which:
    t = time.time()
    if w == "ne": parts = geoload.load_ne()
    elif w == "ne_states": parts = geoload.load_ne("states_provinces")
    elif w == "dcw": parts = [(c, p) for c, p in geoload.load_dcw() if p.bounds[0] >= -180]
    elif w == "dcw_states": parts = [(c, p) for c, p in geoload.load_dcw(False) if len(c) > 2 and p.bounds[0] >= -180]
    elif w == "tz": parts = geoload.load_tz()
    elif w == "tzfpy": parts = geoload.load_tzfpy()
    nv, nr, s = geoload.ring_stats(parts)
    labels = len({c for c, _ in parts})
    print(f"{w}: labels={labels} parts={len(parts)} vertices={nv:,} rings={nr:,} "
          f"median_seg_km={np.median(s):.3f} p90_seg_km={np.percentile(s,90):.3f} total_len_km={s.sum():,.0f} ({time.time()-t:.0f}s)", flush=True)
