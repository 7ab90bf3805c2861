"""The shared library built from geoattrd's geocoder targets (libgeoattrd_geocoder.so), loaded
once per process. The wheel carries it beside this file; GEOATTRD_GEOCODER_LIBRARY names another
(a development build: `swift build -c release --product geoattrd_geocoder`)."""
import ctypes
import os
import threading

LIBRARY_NAME = "libgeoattrd_geocoder.so"
_lock = threading.Lock()
_library = None


def library():
    global _library
    with _lock:
        if _library is None:
            path = os.environ.get("GEOATTRD_GEOCODER_LIBRARY") or os.path.join(os.path.dirname(__file__), LIBRARY_NAME)
            loaded = ctypes.CDLL(path)
            loaded.geoattrd_geocoder_index_format.restype = ctypes.c_uint32
            loaded.geoattrd_geocoder_index_format.argtypes = []
            loaded.geoattrd_geocoder_open.restype = ctypes.c_void_p
            loaded.geoattrd_geocoder_open.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t]
            loaded.geoattrd_geocoder_close.restype = None
            loaded.geoattrd_geocoder_close.argtypes = [ctypes.c_void_p]
            loaded.geoattrd_geocoder_column_count.restype = ctypes.c_int32
            loaded.geoattrd_geocoder_column_count.argtypes = []
            loaded.geoattrd_geocoder_column_name.restype = ctypes.c_int32
            loaded.geoattrd_geocoder_column_name.argtypes = [ctypes.c_int32, ctypes.c_char_p, ctypes.c_size_t]
            loaded.geoattrd_geocoder_lookup.restype = ctypes.c_int32
            loaded.geoattrd_geocoder_lookup.argtypes = [
                ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64,
                ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_int64), ctypes.POINTER(ctypes.c_int64),
            ]
            loaded.geoattrd_geocoder_free.restype = None
            loaded.geoattrd_geocoder_free.argtypes = [ctypes.c_void_p]
            _library = loaded
        return _library


def column_names():
    lib = library()
    names = []
    for index in range(lib.geoattrd_geocoder_column_count()):
        buffer = ctypes.create_string_buffer(64)
        lib.geoattrd_geocoder_column_name(index, buffer, len(buffer))
        names.append(buffer.value.decode())
    return names
