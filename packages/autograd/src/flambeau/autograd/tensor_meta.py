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

from flambeau import _C

Tensor = _C.Tensor


class TensorMeta:
    """A tensor argument's metadata in place of the tensor: shape, dtype, device (and,
    when made from the tensor, its strides and storage offset, which view formulas read).

    ``requires_grad`` says whether the call's node has an edge for it (set from the
    node's edges at backward), so formulas can tell which gradients are wanted.
    """

    __slots__ = ("shape", "dtype", "device", "requires_grad", "_stride", "_offset")

    def __init__(self, shape, dtype, device, requires_grad: bool = False):
        self.shape = tuple(shape)
        self.dtype = dtype
        self.device = device
        self.requires_grad = requires_grad
        self._stride = self._offset = None

    @classmethod
    def of(cls, t) -> TensorMeta:
        meta = cls(tuple(t.shape), t.dtype, t.device, t.requires_grad)
        meta._stride, meta._offset = tuple(t.stride()), t.storage_offset()
        return meta

    @classmethod
    def of_value(cls, value):
        """value with each tensor in it (or it, a tensor) replaced by its TensorMeta."""
        if isinstance(value, Tensor):
            return cls.of(value)
        if isinstance(value, (list, tuple)) and any(isinstance(v, Tensor) for v in value):
            return type(value)(cls.of_value(v) for v in value)
        return value

    def stride(self, dim: int | None = None):
        if self._stride is None:
            raise RuntimeError("TensorMeta: the strides of this argument were not recorded")
        return self._stride if dim is None else self._stride[dim]

    def storage_offset(self) -> int:
        if self._offset is None:
            raise RuntimeError("TensorMeta: the storage offset of this argument was not recorded")
        return self._offset

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
