"""PyTorch's alternative dtype names (``flambeau.float``, ``flambeau.long``, ...), the
math constants ``pi``, ``e``, ``inf``, ``nan``, ``newaxis``, and ``flambeau.layout``
with its layouts: ``strided`` (dense tensors), the sparse ones (``sparse_coo``,
``sparse_csr``, ``sparse_csc``, ``sparse_bsr``, ``sparse_bsc``: see flambeau.sparse)
and ``jagged`` (PyTorch's nested-tensor layout: a constant only, flambeau has no nested
tensors).

The aliases are the same objects as the canonical dtypes, so ``flambeau.float is
flambeau.float32`` holds as in PyTorch. They are exported from here rather than defined in
``flambeau/__init__.py`` so that module never shadows the builtins ``float`` and ``int``.
"""

from __future__ import annotations

import math

from flambeau import _C

float = _C.float32  # noqa: A001 - PyTorch's name
double = _C.float64
half = _C.float16
long = _C.int64
int = _C.int32  # noqa: A001 - PyTorch's name
short = _C.int16
cfloat = _C.complex64
cdouble = _C.complex128
chalf = _C.complex32
bit = _C.uint1  # PyTorch's old name of the 1-bit shell dtype

pi = math.pi
e = math.e
inf = math.inf
nan = math.nan
newaxis = None


class layout:  # noqa: N801 - PyTorch's name
    """How a tensor's elements are laid out in memory: dense (strided) or sparse.

    >>> flambeau.zeros(2).layout
    flambeau.strided
    >>> isinstance(flambeau.sparse_coo, flambeau.layout)
    True
    """

    __slots__ = ("_name",)

    def __init__(self, name: str):
        self._name = name

    def __repr__(self) -> str:
        return f"flambeau.{self._name}"

    def __reduce__(self):
        return (getattr, (_layouts_module(), self._name))


def _layouts_module():
    import flambeau

    return flambeau


strided = layout("strided")
sparse_coo = layout("sparse_coo")
sparse_csr = layout("sparse_csr")
sparse_csc = layout("sparse_csc")
sparse_bsr = layout("sparse_bsr")
sparse_bsc = layout("sparse_bsc")
jagged = layout("jagged")

__all__ = [
    "float",
    "double",
    "half",
    "long",
    "int",
    "short",
    "cfloat",
    "cdouble",
    "chalf",
    "bit",
    "pi",
    "e",
    "inf",
    "nan",
    "newaxis",
    "layout",
    "strided",
    "sparse_coo",
    "sparse_csr",
    "sparse_csc",
    "sparse_bsr",
    "sparse_bsc",
    "jagged",
]
