"""DuckDB's door: `register(connection, index=PATH)` makes `geo_lookup(lat, lon)` callable from
SQL, a vectorised (Arrow) function returning a struct of the attribute columns:

    SELECT p.*, geo_lookup(p.lat, p.lon).* FROM 'points.parquet' p
"""
import pyarrow as pa

from .geocoder import Geocoder


def register(connection, index, name="geo_lookup"):
    """Registers `name(lat DOUBLE, lon DOUBLE)` on `connection`; returns the Geocoder it uses."""
    import duckdb

    try:
        from duckdb import sqltypes as types  # duckdb 1.4 and later
    except ImportError:
        from duckdb import typing as types

    geocoder = Geocoder(index)
    columns = geocoder.columns
    struct = duckdb.struct_type({column: types.VARCHAR for column in columns})

    def lookup(latitudes, longitudes):
        return pa.StructArray.from_arrays(geocoder.lookup_columns(latitudes, longitudes), names=columns)

    # "special": a NULL coordinate reaches the lookup, which answers it with nulls like any other
    # point without an answer, instead of making the whole struct NULL.
    connection.create_function(name, lookup, [types.DOUBLE, types.DOUBLE], struct, type="arrow",
                               null_handling="special", side_effects=False)
    return geocoder
