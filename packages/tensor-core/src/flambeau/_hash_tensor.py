"""``flambeau.hash_tensor``: PyTorch's order-independent hash of a tensor's elements.

mode 0 (the only one PyTorch defines) widens each element to 64 bits (floating point to
float64, integers and bool to int64), reads those bits as an integer and XORs them over
the reduced dims. PyTorch returns the hash as uint64, a dtype flambeau lacks: flambeau
returns int64 holding the same 64 bits (``h % 2**64`` of a Python int gives PyTorch's
number), so hashes compare equal between the two libraries bit for bit.
"""

from __future__ import annotations

import builtins
import math
import operator

from flambeau import _C
from flambeau._arg_checks import check_tensor, dtype_name, wrap_dim
from flambeau.overrides import _dispatch_on

__all__ = ["hash_tensor"]


def _reduced_dims(dim, ndim: int) -> list[int]:
    """The dims to reduce (all when dim is None or empty), wrapped and checked."""
    if dim is None:
        return list(builtins.range(ndim))
    dims = [dim] if isinstance(dim, builtins.int) else list(dim)
    wrapped = [wrap_dim(operator.index(d), ndim) for d in dims]
    for d in wrapped:
        if wrapped.count(d) > 1:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    if ndim == 0:  # a 0-d tensor accepts dim 0 or -1 and has no dim to move
        return []
    return wrapped or list(builtins.range(ndim))


def _xor_fold_last(x):
    """XOR over the last dim (of size >= 1), halving it each step."""
    while x.shape[-1] > 1:
        half = x.shape[-1] // 2
        folded = x[..., :half] ^ x[..., half : 2 * half]
        x = _C.cat([folded, x[..., 2 * half :]], -1) if x.shape[-1] % 2 else folded
    return x[..., 0]


@_dispatch_on("input", "out")
def hash_tensor(input, dim=None, *, keepdim=False, mode=0, out=None):
    """XOR of input's elements (widened to 64 bits) over dim (all dims when None), as int64
    holding the bits of PyTorch's uint64 hash.

    >>> flambeau.hash_tensor(flambeau.tensor([1, 2, 4]))
    tensor(7)
    >>> flambeau.hash_tensor(flambeau.tensor([[1, 2], [3, 3]]), dim=1)
    tensor([3, 0])
    """
    check_tensor("hash_tensor", "input", 1, input)
    if isinstance(mode, bool) or not isinstance(mode, builtins.int):
        raise TypeError(f"hash_tensor(): argument 'mode' must be int, not {type(mode).__name__}")
    if mode != 0:
        raise RuntimeError(f"Unknown hash_tensor mode: {mode}")
    if input.is_complex():
        raise NotImplementedError(
            f"hash_tensor: not implemented for dtype {dtype_name(input.dtype)}"
        )
    if input.numel() == 0 and dim is None:
        raise RuntimeError(
            "hash_tensor: Expected reduction dim to be specified for input.numel() == 0. "
            "Specify the reduction dim with the 'dim' argument."
        )
    shape = tuple(input.shape)
    dims = _reduced_dims(dim, input.dim())
    for d in dims:
        if shape[d] == 0:
            raise IndexError(f"hash_tensor: Expected reduction dim {d} to have non-zero size.")
    source = input.detach()
    if source.is_floating_point():
        bits = source.to(_C.float64).view(_C.int64)
    else:
        bits = source.to(_C.int64)
    kept = [d for d in builtins.range(input.dim()) if d not in dims]
    kept_shape = tuple(shape[d] for d in kept)
    count = math.prod(shape[d] for d in dims)
    rows = bits.permute(kept + sorted(dims)).reshape(kept_shape + (count,))
    result = _xor_fold_last(rows)
    if keepdim and input.dim():
        result = result.reshape(tuple(1 if d in dims else s for d, s in enumerate(shape)))
    return result if out is None else out.copy_(result)


def install() -> None:
    _C.Tensor.hash_tensor = hash_tensor
