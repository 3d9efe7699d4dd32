"""``Tensor.resize`` and ``Tensor.resize_as``: PyTorch's deprecated out-of-place resizes.

Unlike ``resize_`` they keep the number of elements: the result is ``self`` laid out
row-major with the new shape (a view when self is contiguous), recorded by autograd.
"""

from __future__ import annotations

import math
import warnings

from flambeau import _C
from flambeau.overrides import _dispatch_on


def _resized(self, sizes: tuple):
    if len(sizes) == 1 and not isinstance(sizes[0], int):
        sizes = tuple(sizes[0])  # resize((2, 3)) as well as resize(2, 3)
    total = math.prod(sizes)
    if any(s < 0 for s in sizes) or total != self.numel():

        def shape(dims):
            return "x".join(map(str, dims))

        raise RuntimeError(
            f"requested resize to {shape(sizes)} ({total} elements in total), but the given "
            f"tensor has a size of {shape(self.shape)} ({self.numel()} elements). autograd's "
            "resize can only change the shape of a given tensor, while preserving the number "
            "of elements."
        )
    return self.contiguous().view(sizes)


@_dispatch_on("self", method="resize")
def _resize(self, *sizes):
    """A row-major copy or view of self with the given sizes (deprecated; keeps numel)."""
    warnings.warn("non-inplace resize is deprecated", UserWarning, stacklevel=3)
    return _resized(self, sizes)


@_dispatch_on("self", "tensor", method="resize_as")
def _resize_as(self, tensor):
    """self.resize(tensor.size()) (deprecated; keeps numel)."""
    warnings.warn("non-inplace resize_as is deprecated", UserWarning, stacklevel=3)
    return _resized(self, tuple(tensor.shape))


def install() -> None:
    _C.Tensor.resize = _resize
    _C.Tensor.resize_as = _resize_as
