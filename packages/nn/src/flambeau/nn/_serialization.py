"""Pickling of tensors through NumPy, for modules and parameters.

The core's Tensor does not pickle by itself; nn registers this reducer for it
(only if the core has none), so a Module with its parameters and buffers can be
pickled, deep-copied and sent to other processes.
"""

from __future__ import annotations

import copyreg

import numpy as np

import flambeau
from flambeau import Tensor

# NumPy has no bfloat16: those tensors travel as float32 and are cast back.
_VIA_FLOAT32 = {"bfloat16"}


def _dtype_name(t) -> str:
    return str(t.dtype).rpartition(".")[2]


def pack(t) -> tuple:
    name = _dtype_name(t)
    src = t.float() if name in _VIA_FLOAT32 else t
    return (np.ascontiguousarray(src.numpy()), name)


def unpack(packed):
    array, name = packed
    t = flambeau.from_numpy(np.array(array))
    if name in _VIA_FLOAT32:
        t = t.to(getattr(flambeau, name))
    return t


def _rebuild_tensor(packed, requires_grad):
    t = unpack(packed)
    t.requires_grad = requires_grad
    return t


def _reduce_tensor(t):
    return (_rebuild_tensor, (pack(t.detach()), t.requires_grad))


def install() -> None:
    """Register the reducer for flambeau.Tensor unless the core already pickles tensors."""
    if Tensor.__reduce_ex__ is object.__reduce_ex__ and Tensor not in copyreg.dispatch_table:
        copyreg.pickle(Tensor, _reduce_tensor)
