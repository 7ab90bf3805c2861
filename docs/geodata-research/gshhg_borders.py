"""WDBII border lines from GMT's binned GSHHG files: vertex counts and segment lengths per level
(1 = national boundaries, 2 = internal (states, Americas), 3 = maritime)."""
import sys, numpy as np, netCDF4 as nc, geoload
f = sys.argv[1]
d = nc.Dataset(f); d.set_auto_maskandscale(False)
g = lambda n: d.variables[n][:]
bs = int(g('Bin_size_in_minutes')[0]) / 60.0; nx = int(g('N_bins_in_360_longitude_range')[0])
first_seg = g('Id_of_first_segment_in_a_bin'); nseg = g('N_segments_in_a_bin').astype(int)
npts = g('N_points_for_a_segment').astype(int); lev = g('Hierarchial_level_of_a_segment')
p0 = g('Id_of_first_point_in_a_segment'); dx = g('Relative_longitude_from_SW_corner_of_bin').astype(np.uint16)
dy = g('Relative_latitude_from_SW_corner_of_bin').astype(np.uint16)
seglen = {1: [], 2: [], 3: []}; nv = {1: 0, 2: 0, 3: 0}
for b in np.flatnonzero(nseg):
    west = (b % nx) * bs; south = 90 - (b // nx + 1) * bs
    for s in range(first_seg[b], first_seg[b] + nseg[b]):
        a, n = p0[s], npts[s]
        lon = west + dx[a:a+n] * bs / 65535.0; lat = south + dy[a:a+n] * bs / 65535.0
        L = int(lev[s]); nv[L] += n
        seglen[L].append(geoload.hav_km(lon[:-1], lat[:-1], lon[1:], lat[1:]))
for L in (1, 2, 3):
    s = np.concatenate(seglen[L]) if seglen[L] else np.array([0.0])
    print(f"level {L}: points={nv[L]:,} median_seg_km={np.median(s):.3f} p90={np.percentile(s,90):.3f} total_km={s.sum():,.0f}")
