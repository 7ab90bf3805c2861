"""Add tzfpy labels and a 'TZ+fix' labelling (multi-country zones split by DCW) to the sampled points."""
import csv, collections, numpy as np, tzfpy, geoload
from timezonefinder import TimezoneFinder
tf = TimezoneFinder(); z2c = geoload.zone_to_cc()
# zones that cover more than one country (zone_purity.py): resolve inside them with the DCW label
MULTI = {"Asia/Bangkok": {"TH", "VN"}, "Europe/Belgrade": {"RS", "XK"}, "Asia/Jerusalem": {"IL", "PS"}}
for src in ("TZ", "DCW", "NE"):
    rows = list(csv.DictReader(open(f"points_{src}.csv")))
    for r in rows:
        lon, lat = float(r["lon"]), float(r["lat"])
        r["TZFPY"] = z2c.get(tzfpy.get_tz(lon, lat))
        z = tf.timezone_at(lng=lon, lat=lat)
        r["TZFIX"] = r["DCW"] if z in MULTI and r["DCW"] in MULTI[z] else z2c.get(z)
    print(f"== {len(rows)} points 0.5-10 km from {src} land borders")
    names = ["NE", "DCW", "TZ", "TZFIX", "TZFPY"]
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            both = [r for r in rows if r[a] not in (None, "None") and r[b] not in (None, "None")]
            dis = [r for r in both if r[a] != r[b]]
            top = collections.Counter(f"{r[a]}/{r[b]}" for r in dis).most_common(6)
            print(f"  {a:5s} vs {b:5s}: {100*len(dis)/len(both):5.2f}% of {len(both)}  {top if b in ('TZFIX','TZFPY') or a=='NE' else ''}")
    near = [r for r in rows if float(r["dist_km"]) <= 2]
    for a in ("NE", "DCW", "TZFPY"):
        d = sum(r[a] != r["TZFIX"] for r in near)
        print(f"  within 2 km ({len(near)} pts): {a} vs TZFIX {100*d/len(near):.2f}%")
