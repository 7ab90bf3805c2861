"""The wheel carries a native library (libgeoattrd_geocoder.so): it is platform-specific, though
it has no Python extension module (ctypes loads the library). scripts/build-wheel.sh builds it."""
from setuptools import setup
from setuptools.dist import Distribution


class NativeLibraryDistribution(Distribution):
    def has_ext_modules(self):
        return True


setup(distclass=NativeLibraryDistribution)
