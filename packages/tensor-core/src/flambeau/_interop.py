"""What C++ extensions need to know of the core: ``compiled_with_cxx11_abi`` (which
libstdc++ ABI the core's C++ uses). DLPack exchange is in ``flambeau._dlpack``."""

from __future__ import annotations

import functools
import mmap

from flambeau import _C

__all__ = ["compiled_with_cxx11_abi"]


@functools.cache
def compiled_with_cxx11_abi() -> bool:
    """Whether the core was compiled with libstdc++'s C++11 ABI (_GLIBCXX_USE_CXX11_ABI=1).

    Read from the compiled module itself: the new ABI puts std::string and std::list in
    the namespace std::__cxx11, which appears in its symbols' mangled names. False for a
    core built against another C++ library (libc++, MSVC's).

    >>> isinstance(flambeau.compiled_with_cxx11_abi(), bool)
    True
    """
    with open(_C.__file__, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
        return m.find(b"St7__cxx11") != -1
