"""Flambeau tensors as the buffers mpi4py's buffer-based calls read and write.

A contiguous CPU tensor is passed as a NumPy array over its own memory (zero-copy:
Tensor.numpy() shares the storage), so nothing is pickled and nothing copied. Data
movement (broadcast, gather, send, ...) goes as bytes, which serves every dtype
(bfloat16 and bool included); reductions need the element type, and float16/bfloat16,
which MPI cannot add, are reduced in float32 and rounded back.
"""

from __future__ import annotations

import numpy as np

import flambeau

from ._runtime import mpi
from .reduce_op import RedOpType

# Reduced through a float32 copy: MPI has no half-precision arithmetic.
_WIDENED = {flambeau.float16, flambeau.bfloat16}
_INTEGER = {
    flambeau.uint8,
    flambeau.int8,
    flambeau.int16,
    flambeau.int32,
    flambeau.int64,
}


def check_tensor(t, name: str = "tensor") -> None:
    if not isinstance(t, flambeau.Tensor):
        raise TypeError(
            f"Invalid function argument. Expected parameter `{name}` of type flambeau.Tensor"
            f"\n             but got {type(t)} instead."
        )
    if t.device.type != "cpu":
        raise ValueError(
            f"the MPI backend takes CPU tensors; {name} is on {t.device} (a GPU backend "
            "is a later step)"
        )


def check_tensor_list(ts, name: str) -> None:
    if not isinstance(ts, (list, tuple)) or not all(isinstance(t, flambeau.Tensor) for t in ts):
        raise TypeError(
            f"Invalid function argument. Expected parameter `{name}` of type List[flambeau.Tensor]"
        )
    for t in ts:
        check_tensor(t, name)


def nbytes(t) -> int:
    return t.numel() * t.element_size()


def as_bytes(t) -> np.ndarray:
    """A flat uint8 array over the memory of the contiguous tensor t (no copy)."""
    d = t.detach()
    if d.numel() == 0:
        return np.empty(0, dtype=np.uint8)
    if d.dim() == 0:
        d = d.reshape(1)
    if d.dtype == flambeau.bool:
        d = d.view(flambeau.uint8)
    elif d.dtype != flambeau.uint8:
        d = d.view(flambeau.uint8)
    return d.numpy().reshape(-1)


def as_typed(t) -> np.ndarray:
    """A flat array of t's element type over its memory (no copy); t contiguous and of a
    type NumPy has."""
    d = t.detach()
    if d.dim() == 0:
        d = d.reshape(1)
    return d.numpy().reshape(-1)


class Staged:
    """A contiguous tensor to communicate through, standing for `t`.

    It is `t` itself when t is contiguous (and, for reductions, of a type MPI adds);
    otherwise a contiguous (float32 for half types) copy, written back by finish().
    """

    __slots__ = ("target", "tensor", "_copied")

    def __init__(self, t, *, reduction: bool = False, fill: bool = True):
        self.target = t
        widen = reduction and t.dtype in _WIDENED
        if t.is_contiguous() and not widen:
            self.tensor, self._copied = t, False
        else:
            dtype = flambeau.float32 if widen else t.dtype
            if fill:
                self.tensor = t.detach().to(dtype=dtype, memory_format=flambeau.contiguous_format)
                if self.tensor.data_ptr() == t.data_ptr():
                    self.tensor = self.tensor.clone()
            else:
                self.tensor = flambeau.empty(tuple(t.shape), dtype=dtype)
            self._copied = True

    def finish(self) -> None:
        if self._copied:
            with flambeau.no_grad():
                self.target.copy_(self.tensor)


def mpi_op(op: RedOpType, dtype):
    """The MPI reduction for `op` on elements of `dtype` (AVG is SUM, divided later)."""
    MPI = mpi()
    if op == RedOpType.PREMUL_SUM:
        raise ValueError("ReduceOp.PREMUL_SUM is NCCL's; the MPI backend does not support it")
    if dtype == flambeau.bool:
        # Torch's meaning on bool: SUM/MAX/BOR are "any", PRODUCT/MIN/BAND are "all".
        table = {
            RedOpType.SUM: MPI.LOR,
            RedOpType.AVG: MPI.LOR,
            RedOpType.MAX: MPI.LOR,
            RedOpType.BOR: MPI.LOR,
            RedOpType.PRODUCT: MPI.LAND,
            RedOpType.MIN: MPI.LAND,
            RedOpType.BAND: MPI.LAND,
            RedOpType.BXOR: MPI.LXOR,
        }
        return table[op]
    if op in (RedOpType.BAND, RedOpType.BOR, RedOpType.BXOR) and dtype not in _INTEGER:
        raise ValueError(f"bitwise reduction {op.name} needs an integer tensor, not {dtype}")
    return {
        RedOpType.SUM: MPI.SUM,
        RedOpType.AVG: MPI.SUM,
        RedOpType.PRODUCT: MPI.PROD,
        RedOpType.MIN: MPI.MIN,
        RedOpType.MAX: MPI.MAX,
        RedOpType.BAND: MPI.BAND,
        RedOpType.BOR: MPI.BOR,
        RedOpType.BXOR: MPI.BXOR,
    }[op]


def divide_for_avg(t, world: int) -> None:
    """t /= world in place, for ReduceOp.AVG (integers truncate, as NCCL's average)."""
    with flambeau.no_grad():
        if t.dtype.is_floating_point or t.dtype.is_complex:
            t.div_(world)
        elif t.dtype != flambeau.bool:
            t.copy_(flambeau.div(t, world, rounding_mode="trunc"))
