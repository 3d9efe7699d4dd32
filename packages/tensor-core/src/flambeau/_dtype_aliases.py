"""PyTorch's alternative dtype names (``flambeau.float``, ``flambeau.long``, ...), the
math constants ``pi``, ``e``, ``inf``, ``nan``, ``newaxis``, and ``flambeau.layout``
with its one layout, ``strided``.

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

pi = math.pi
e = math.e
inf = math.inf
nan = math.nan
newaxis = None


class layout:  # noqa: N801 - PyTorch's name
    """How a tensor's elements are laid out in memory; flambeau has dense (strided) tensors."""

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

__all__ = [
    "float",
    "double",
    "half",
    "long",
    "int",
    "short",
    "cfloat",
    "cdouble",
    "pi",
    "e",
    "inf",
    "nan",
    "newaxis",
    "layout",
    "strided",
]
