"""What a recorded call keeps of a tensor argument whose value no wanted gradient reads.

A derivative formula declares (``reads=`` in :func:`derivatives.formula`) which
arguments' values each input's gradient reads. An argument that no wanted gradient
reads is not kept alive by the graph: the recorded call holds a :class:`TensorMeta`
instead, with the shape, dtype and device that undoing broadcasting and casting the
gradient need (``y = x * 3.0`` keeps nothing of ``x``, as in PyTorch). The core's C++
recorder makes these by calling the class, which the package installs.
"""

from __future__ import annotations

import math


class TensorMeta:
    """A tensor argument's metadata in place of the tensor: shape, dtype, device.

    ``requires_grad`` says whether the call's node has an edge for it (set from the
    node's edges at backward), so formulas can tell which gradients are wanted.
    """

    __slots__ = ("shape", "dtype", "device", "requires_grad")

    def __init__(self, shape, dtype, device, requires_grad: bool = False):
        self.shape = tuple(shape)
        self.dtype = dtype
        self.device = device
        self.requires_grad = requires_grad

    @classmethod
    def of(cls, t) -> TensorMeta:
        return cls(tuple(t.shape), t.dtype, t.device, t.requires_grad)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def dim(self) -> int:
        return len(self.shape)

    def size(self, dim: int | None = None):
        return self.shape if dim is None else self.shape[dim]

    def numel(self) -> int:
        return math.prod(self.shape)

    def is_complex(self) -> bool:
        return self.dtype.is_complex

    def is_floating_point(self) -> bool:
        return self.dtype.is_floating_point

    def __repr__(self) -> str:
        return f"TensorMeta(shape={self.shape}, dtype={self.dtype}, device={self.device})"
