"""flambeau.utils.cpp_extension: C++ extensions for flambeau, as torch.utils.cpp_extension.

- ``load(name, sources)`` / ``load_inline(name, cpp_sources, functions=[...])`` build a
  module with the system C++ compiler (through ninja when installed), cache it by a
  hash of its sources, flags, compiler, Python and flambeau's version, and import it;
- ``CppExtension`` and ``BuildExtension`` build packaged extensions with setuptools;
- ``include_paths()`` gives the directories of ``<flambeau/extension.h>`` and pybind11.

The C++ API is documented in flambeau/extension.h; CMake projects use
``find_package(flambeau)`` and ``flambeau::extension`` (docs/guides/extensions.rst).
"""

from __future__ import annotations

import subprocess

from ._cache import get_default_build_root
from ._compiler import ninja_binary
from ._jit import load, load_inline
from ._setuptools import BuildExtension, CppExtension, CUDAExtension

__all__ = [
    "BuildExtension",
    "CUDAExtension",
    "CppExtension",
    "get_default_build_root",
    "include_paths",
    "is_ninja_available",
    "library_paths",
    "load",
    "load_inline",
    "verify_ninja_availability",
]


def include_paths(device_type: str = "cpu") -> list[str]:
    """The include directories an extension needs: flambeau's (``flambeau/extension.h``),
    pybind11's and Python's.

    >>> from flambeau.utils import cpp_extension
    >>> paths = cpp_extension.include_paths()
    >>> len(paths), paths[0] == flambeau.get_include()
    (3, True)
    """
    from ._compiler import include_paths as paths

    if device_type not in ("cpu", None):
        raise RuntimeError(
            f"include_paths: no headers for device type {device_type!r}: only 'cpu' is available"
        )
    return paths()


def library_paths(device_type: str = "cpu") -> list[str]:
    """Library directories to link against: none, since extensions link nothing of
    flambeau's (its C++ API is header-only over the Python objects).

    >>> from flambeau.utils import cpp_extension
    >>> cpp_extension.library_paths()
    []
    """
    return []


def is_ninja_available() -> bool:
    """Whether the ninja build tool can be run.

    >>> from flambeau.utils import cpp_extension
    >>> isinstance(cpp_extension.is_ninja_available(), bool)  # True where ninja runs
    True
    """
    ninja = ninja_binary()
    if ninja is None:
        return False
    try:
        subprocess.check_output([ninja, "--version"])
    except (OSError, subprocess.CalledProcessError):
        return False
    return True


def verify_ninja_availability() -> None:
    """Raises RuntimeError when ninja is not available.

    >>> from flambeau.utils import cpp_extension
    >>> if cpp_extension.is_ninja_available():
    ...     cpp_extension.verify_ninja_availability()  # returns None, raising nothing
    """
    if not is_ninja_available():
        raise RuntimeError("Ninja is required to load C++ extensions (pip install ninja)")
