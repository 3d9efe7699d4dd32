"""Load OpenBLAS from the scipy-openblas32 wheel before the C++ core.

The core links against ``libscipy_openblas.so``. Its RPATH finds the library
when both wheels share a site-packages directory; preloading it by path also
covers split layouts (user site, system site seen through a venv).
"""

from __future__ import annotations

import ctypes
import importlib.util
import os


def preload() -> None:
    spec = importlib.util.find_spec("scipy_openblas32")
    if spec is None or not spec.submodule_search_locations:
        return  # the import of _C will then name the missing library
    lib = os.path.join(spec.submodule_search_locations[0], "lib", "libscipy_openblas.so")
    if os.path.exists(lib):
        ctypes.CDLL(lib, mode=ctypes.RTLD_GLOBAL)
