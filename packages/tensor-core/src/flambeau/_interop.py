"""What other libraries and C++ extensions exchange with flambeau: ``to_dlpack`` (the legacy
DLPack export) and ``compiled_with_cxx11_abi`` (which libstdc++ ABI the core's C++ uses)."""

from __future__ import annotations

import functools
import mmap

from flambeau import _C
from flambeau._arg_checks import check_tensor

__all__ = ["compiled_with_cxx11_abi", "to_dlpack"]


def to_dlpack(tensor):
    """A DLPack capsule ("dltensor") sharing ``tensor``'s memory, for ``from_dlpack`` of
    flambeau or another library; consume it once. The data is exported whether or not the
    tensor requires grad (the capsule carries no graph).

    >>> x = flambeau.tensor([1.0, 2.0])
    >>> y = flambeau.from_dlpack(flambeau.to_dlpack(x))
    >>> y.data_ptr() == x.data_ptr()
    True
    """
    check_tensor("_to_dlpack", "data", 1, tensor)
    return tensor.detach().__dlpack__()


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
