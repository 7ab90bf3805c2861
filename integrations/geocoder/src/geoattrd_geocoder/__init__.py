"""geoattrd's offline reverse geocoder for the back office: the same answers as the device's
geoattrd, from the same index, on Apache Arrow batches, in Apache Spark and in DuckDB.

    from geoattrd_geocoder import Geocoder
    with Geocoder("/usr/share/geoattrd/world.gidx") as geocoder:
        enriched = geocoder.lookup_arrow(batch, lat="lat", lon="lon")

`geoattrd_geocoder.spark.enrich` and `geoattrd_geocoder.duckdb.register` are the engines' doors.
"""
from .geocoder import Geocoder, IndexRefused

__all__ = ["Geocoder", "IndexRefused"]
__version__ = "0.5.0"
