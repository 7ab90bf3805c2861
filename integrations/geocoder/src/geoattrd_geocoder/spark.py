"""Spark's door: `enrich(df, lat="lat", lon="lon", index=PATH)` adds the attribute columns to a
DataFrame through `mapInArrow`, each executor process opening the index once.

The index reaches the executors the way Spark ships files: a local path is added with
`SparkContext.addFile`; a name shipped with `--files world.gidx` (or inside `--archives`) is
found through `SparkFiles.get`.
"""
import os

from ._library import column_names
from .geocoder import Geocoder, IndexRefused

_opened = {}


def _executor_geocoder(index):
    """The process's Geocoder for `index`, opened at its first batch."""
    geocoder = _opened.get(index)
    if geocoder is None:
        from pyspark import SparkFiles

        candidates = [SparkFiles.get(os.path.basename(index)), os.path.abspath(index), index]
        path = next((candidate for candidate in candidates if os.path.isfile(candidate)), candidates[0])
        geocoder = _opened[index] = Geocoder(path)
    return geocoder


def enrich(df, lat="lat", lon="lon", index="/usr/share/geoattrd/world.gidx"):
    """`df` with the attribute columns (strings, nullable) after its own, replacing columns of
    the same names."""
    from pyspark.sql.types import StringType, StructField, StructType

    if os.path.isabs(index) and os.path.isfile(index):
        Geocoder(index).close()  # a refused index is said here, on the driver, not in a task
        try:
            df.sparkSession.sparkContext.addFile(index)
        except Exception as error:  # already added under this name
            if "already" not in str(error):
                raise
    names = column_names()
    schema = StructType([field for field in df.schema.fields if field.name not in names] +
                        [StructField(name, StringType(), True) for name in names])

    def run(batches):
        geocoder = _executor_geocoder(index)
        try:
            for batch in batches:
                yield geocoder.lookup_arrow(batch, lat=lat, lon=lon)
        except IndexRefused:
            # The file changed under this process's mapping: the task fails, and the next one here
            # (Spark's retry) opens the file again.
            _opened.pop(index, None)
            raise

    return df.mapInArrow(run, schema)
