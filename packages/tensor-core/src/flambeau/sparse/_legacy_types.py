"""PyTorch's legacy sparse tensor types: ``flambeau.sparse.FloatTensor``, ... as
constructors of COO tensors and as ``isinstance`` checks (old GPyTorch-era code uses both).

A type is called as ``()``, ``(*sizes)``, ``(Size)``, ``(indices, values)`` or
``(indices, values, size)``; as PyTorch's, the last two keep the values' dtype and warn that
the constructor is deprecated.
"""

from __future__ import annotations

import builtins
import warnings

import flambeau
from flambeau._legacy_constructors import make_legacy_type

# The legacy names PyTorch has under torch.sparse (no Bool or complex types there).
_DTYPES = {
    "FloatTensor": flambeau.float32,
    "DoubleTensor": flambeau.float64,
    "HalfTensor": flambeau.float16,
    "BFloat16Tensor": flambeau.bfloat16,
    "LongTensor": flambeau.int64,
    "IntTensor": flambeau.int32,
    "ShortTensor": flambeau.int16,
    "CharTensor": flambeau.int8,
    "ByteTensor": flambeau.uint8,
}
NAME_OF_DTYPE = {dtype: name for name, dtype in _DTYPES.items()}


def _is_sizes(args) -> bool:
    if len(args) == 1 and isinstance(args[0], flambeau.Size):
        return True
    return all(isinstance(a, builtins.int) and not isinstance(a, builtins.bool) for a in args)


def _construct(ctor: str, dtype, args, device):
    if device is not None and flambeau.device(device).type != "cpu":
        raise RuntimeError(
            f"legacy constructor {ctor} expects device type: cpu but device type: "
            f"{flambeau.device(device).type} was passed"
        )
    if _is_sizes(args):  # () too: an empty (0,) tensor
        shape = tuple(args[0]) if args and isinstance(args[0], flambeau.Size) else args or (0,)
        if any(s < 0 for s in shape):
            raise RuntimeError(f"Trying to create tensor with negative dimension: {list(shape)}")
        indices = flambeau.zeros(len(shape), 0, dtype=flambeau.int64)
        return flambeau.sparse_coo_tensor(indices, flambeau.zeros(0, dtype=dtype), shape)
    if len(args) in (2, 3) and all(isinstance(a, flambeau.Tensor) for a in args[:2]):
        warnings.warn(
            f"torch.sparse.{ctor}(indices, values, shape, *, device=) is deprecated.  Please "
            "use torch.sparse_coo_tensor(indices, values, shape, dtype=, device=).",
            UserWarning,
            stacklevel=3,
        )
        return flambeau.sparse_coo_tensor(*args)
    got = ", ".join(type(a).__name__ for a in args)
    raise TypeError(
        f"new() received an invalid combination of arguments - got ({got}), but expected one "
        "of: (), (Tensor indices, Tensor values), (Tensor indices, Tensor values, tuple of ints "
        "size), (tuple of ints size)"
    )


def _make(name: str, dtype):
    return make_legacy_type(
        name,
        dtype,
        layout=flambeau.sparse_coo,
        module="flambeau.sparse",
        construct=_construct,
        doc=f"Legacy constructor of sparse COO {dtype} tensors; also an isinstance check.\n\n"
        f">>> s = flambeau.sparse.{name}(2, 3)\n"
        f">>> s.layout, s.dtype, isinstance(s, flambeau.sparse.{name})\n"
        f"(flambeau.sparse_coo, {dtype!r}, True)\n",
    )


LEGACY_SPARSE_TYPES = {name: _make(name, dtype) for name, dtype in _DTYPES.items()}
