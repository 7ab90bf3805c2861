"""The Arrow door: a batch of coordinates in, the geo attributes out as Arrow string columns, from
the geocoder geoattrd itself runs (not a port), on a memory-mapped index that every process on a
machine opening the same file shares."""
import ctypes
import os

import pyarrow as pa
import pyarrow.compute as pc

from ._library import column_names, library

# A lookup call's points: each column's data stays far below the 2 GiB its int32 offsets reach.
_POINTS_PER_CALL = 1 << 20


class IndexRefused(Exception):
    """The index file cannot be used: missing, unreadable, of another format, or corrupt; or it
    changed while a Geocoder had it open (copied over in place, truncated), which every lookup of
    that Geocoder raises from then on: open a new one once the file is whole. The message names
    the file and what to do."""

    def __init__(self, path, reason):
        super().__init__(reason)
        self.path = path


class _Allocation:
    """Keeps one buffer the library allocated until Arrow lets go of it."""

    __slots__ = ("_free", "_address")

    def __init__(self, free, address):
        self._free = free
        self._address = address

    def __del__(self):
        self._free(self._address)


def _coordinates(values, name):
    """A float64 array without nulls (NaN where a value was null)."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks() if values.num_chunks != 1 else values.chunk(0)
    elif not isinstance(values, pa.Array):
        values = pa.array(values, type=pa.float64())
    if not (pa.types.is_floating(values.type) or pa.types.is_integer(values.type) or pa.types.is_decimal(values.type)
            or pa.types.is_null(values.type)):
        raise TypeError(f"column {name!r} is {values.type}: latitude and longitude must be numbers")
    values = pc.cast(values, pa.float64())
    if values.null_count:
        values = pc.fill_null(values, float("nan"))
    return values


def _address(values):
    """Where a float64 array's (or slice's) first value is, for the library; None when empty."""
    data = values.buffers()[1]
    return None if data is None or len(values) == 0 else data.address + values.offset * 8


class Geocoder:
    """An open index. `Geocoder(path)` raises IndexRefused when the file cannot be used."""

    def __init__(self, index_path):
        self._lib = library()
        self.index_path = os.fspath(index_path)
        message = ctypes.create_string_buffer(2048)
        handle = self._lib.geoattrd_geocoder_open(os.fsencode(self.index_path), message, len(message))
        if not handle:
            raise IndexRefused(self.index_path, message.value.decode("utf-8", "replace"))
        self._handle = handle
        #: The attribute columns a lookup adds, in order: geo_country_iso_code, ...
        self.columns = column_names()

    @staticmethod
    def index_format():
        """The index format this library reads."""
        return library().geoattrd_geocoder_index_format()

    def close(self):
        handle, self._handle = getattr(self, "_handle", None), None
        if handle:
            self._lib.geoattrd_geocoder_close(handle)

    __del__ = close

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def lookup_columns(self, latitudes, longitudes):
        """One Arrow string array per attribute column for the points; a point whose coordinate is
        null, not a number, infinite or out of range gets nulls, as one the index has no answer
        for does."""
        if not self._handle:
            raise ValueError("the geocoder is closed")
        latitudes = _coordinates(latitudes, "lat")
        longitudes = _coordinates(longitudes, "lon")
        if len(latitudes) != len(longitudes):
            raise ValueError(f"{len(latitudes)} latitudes but {len(longitudes)} longitudes")
        parts = [self._lookup(latitudes.slice(start, _POINTS_PER_CALL), longitudes.slice(start, _POINTS_PER_CALL))
                 for start in range(0, max(len(latitudes), 1), _POINTS_PER_CALL)]
        if len(parts) == 1:
            return parts[0]
        return [pa.concat_arrays([part[column] for part in parts]) for column in range(len(self.columns))]

    def _lookup(self, latitudes, longitudes):
        count = len(latitudes)
        columns = len(self.columns)
        buffers = (ctypes.c_void_p * (3 * columns))()
        sizes = (ctypes.c_int64 * (3 * columns))()
        nulls = (ctypes.c_int64 * columns)()
        status = self._lib.geoattrd_geocoder_lookup(
            self._handle, _address(latitudes), _address(longitudes), count, buffers, sizes, nulls)
        if status == 4:
            raise IndexRefused(self.index_path, f"geo index {self.index_path} changed while it was open (copied over "
                               "in place, or truncated); open it again once it is whole, and replace an "
                               f"index by rename (install -m 0644 NEW {self.index_path}), never by copying over it")
        if status != 0:
            raise MemoryError(f"geoattrd_geocoder_lookup failed with status {status} for {count} points")
        arrays = []
        free = self._lib.geoattrd_geocoder_free
        for column in range(columns):
            wrapped = [pa.foreign_buffer(buffers[3 * column + part], sizes[3 * column + part],
                                         base=_Allocation(free, buffers[3 * column + part])) for part in range(3)]
            arrays.append(pa.Array.from_buffers(pa.string(), count, wrapped, null_count=nulls[column]))
        return arrays

    def lookup_arrow(self, batch, lat="lat", lon="lon"):
        """`batch` (a pyarrow RecordBatch or Table) with the attribute columns added after its own,
        replacing columns of the same names (re-attributing a batch gives the index's answers)."""
        arrays = self.lookup_columns(batch.column(lat), batch.column(lon))
        keep = [i for i, name in enumerate(batch.schema.names) if name not in self.columns]
        names = [batch.schema.names[i] for i in keep] + self.columns
        if isinstance(batch, pa.Table):
            return pa.Table.from_arrays([batch.column(i) for i in keep] + arrays, names=names)
        return pa.RecordBatch.from_arrays([batch.column(i) for i in keep] + arrays, names=names)
