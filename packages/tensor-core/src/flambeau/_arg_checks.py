"""PyTorch's argument errors for the functions the Python face composes (the core's own
operators get theirs from the generated bindings): a non-tensor where a tensor is expected,
a non-int where an int is, a dimension out of range, an operator called on a dtype it has no
kernel for.

flambeau.nn.functional raises the same errors through these helpers.
"""

from __future__ import annotations

import operator

from flambeau import _C


def check_tensor(fn: str, name: str, position: int, value, optional: bool = False) -> None:
    """PyTorch's argument-parser TypeError where a tensor (or, if optional, None) is expected."""
    if not isinstance(value, _C.Tensor) and not (optional and value is None):
        raise TypeError(
            f"{fn}(): argument '{name}' (position {position}) must be Tensor, not "
            f"{type(value).__name__}"
        )


def int_argument(fn: str, name: str, position: int, value) -> int:
    """value as an int, or PyTorch's argument-parser TypeError (bool is not an int)."""
    try:
        if isinstance(value, bool):
            raise TypeError
        return operator.index(value)
    except TypeError:
        raise TypeError(
            f"{fn}(): argument '{name}' (position {position}) must be int, not "
            f"{type(value).__name__}"
        ) from None


def wrap_dim(dim: int, ndim: int) -> int:
    """dim counted from 0 (a 0-d tensor has one dimension, -1 or 0), or PyTorch's IndexError."""
    nd = max(ndim, 1)
    if not -nd <= dim < nd:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-nd}, {nd - 1}], but got {dim})"
        )
    return dim % nd


def dtype_name(dtype) -> str:
    """float32, int64, ...: a dtype as error messages name it."""
    return str(dtype).removeprefix("flambeau.")


def torch_type_name(dtype) -> str:
    """Float, Long, ComplexDouble, ...: a dtype as PyTorch's C++ errors name it."""
    from flambeau._legacy_constructors import _TYPE_NAMES

    name = _TYPE_NAMES.get(dtype)
    return name.removesuffix("Tensor") if name else dtype_name(dtype)


def require_floating(fn: str, input) -> None:
    """NotImplementedError, as PyTorch's kernels raise, for a non-floating input."""
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"{fn}: not implemented for dtype {dtype_name(input.dtype)}")
