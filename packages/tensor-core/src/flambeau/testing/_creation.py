"""make_tensor: random test tensors of any shape, dtype and layout, as PyTorch makes them."""

from __future__ import annotations

import collections.abc
import math
import warnings

import flambeau as F

__all__ = ["make_tensor"]


def _dtypes(*names: str) -> tuple:
    return tuple(getattr(F, n) for n in names if hasattr(F, n))


_INTEGRAL = _dtypes("uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64")
_FLOATING = _dtypes("float16", "bfloat16", "float32", "float64")
_COMPLEX = _dtypes("complex32", "complex64", "complex128")


def _check_range(low, high, dtype, lowest: float, highest: float, default: tuple):
    """low and high (defaults filled in) clamped to [lowest, highest], after PyTorch's checks."""
    low = default[0] if low is None else low
    high = default[1] if high is None else high
    if any(isinstance(v, float) and math.isnan(v) for v in (low, high)):
        raise ValueError(f"`low` and `high` cannot be NaN, but got low={low} and high={high}")
    if low == high and dtype in _FLOATING + _COMPLEX:
        warnings.warn(
            "Passing `low==high` to `flambeau.testing.make_tensor` for floating or complex "
            "types is deprecated since 2.1 and will be removed in 2.3. Use "
            "`flambeau.full(...)` instead.",
            FutureWarning,
            stacklevel=3,
        )
    elif low >= high:
        raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
    elif high < lowest or low >= highest:
        raise ValueError(
            f"The value interval specified by `low` and `high` is [{low}, {high}), "
            f"but {dtype} only supports [{lowest}, {highest})"
        )
    low, high = min(max(low, lowest), highest), min(max(high, lowest), highest)
    return low, high


def _uniform_(t, low: float, high: float):
    # high - low may overflow the dtype (the whole finite range): draw half of it, double.
    if high - low >= F.finfo(t.dtype).max:
        return t.uniform_(low / 2, high / 2).mul_(2)
    return t.uniform_(low, high)


def make_tensor(
    *shape,
    dtype,
    device,
    low=None,
    high=None,
    requires_grad: bool = False,
    noncontiguous: bool = False,
    exclude_zero: bool = False,
    memory_format=None,
):
    """A tensor of ``shape`` filled with values drawn uniformly from ``[low, high)``.

    ``shape`` is given as integers or as one sequence. Omitted bounds default per dtype:
    bool [0, 2), integers [-9, 10) (unsigned: [0, 10)), floating and complex [-9, 9)
    (real and imaginary parts alike). Bounds outside the dtype's finite range are clamped
    to it (integral bounds are then rounded up). ``noncontiguous=True`` returns a
    non-contiguous view (for more than one element); ``memory_format`` a tensor in that
    layout (the two exclude each other). ``exclude_zero=True`` replaces zeros by 1
    (bool and integers) or the dtype's smallest normal number. Raises ValueError for NaN
    bounds, ``low >= high``, bounds outside the dtype's range and ``requires_grad=True``
    with a bool or integral dtype; TypeError for a dtype it cannot fill.

    >>> from flambeau.testing import make_tensor
    >>> _ = flambeau.manual_seed(0)
    >>> make_tensor(2, 3, dtype=flambeau.int64, device="cpu", low=0, high=5)
    tensor([[1, 3, 3],
            [0, 4, 4]])
    >>> make_tensor((2, 3), dtype=flambeau.float32, device="cpu", noncontiguous=True).stride()
    (6, 2)
    """
    if len(shape) == 1 and isinstance(shape[0], collections.abc.Sequence):
        shape = shape[0]
    shape = tuple(shape)
    if noncontiguous and memory_format is not None:
        raise ValueError(
            "The parameters `noncontiguous` and `memory_format` are mutually exclusive, but "
            f"got noncontiguous={noncontiguous} and memory_format={memory_format}"
        )
    exact = dtype is F.bool or dtype in _INTEGRAL
    if requires_grad and exact:
        raise ValueError(
            "`requires_grad=True` is not supported for boolean and integral dtypes, but got "
            f"dtype={dtype}"
        )
    noncontiguous = noncontiguous and math.prod(shape) > 1
    if noncontiguous:  # every other element of a last dimension twice as long
        shape = (*shape[:-1], 2 * shape[-1])

    if dtype is F.bool:
        low, high = _check_range(low, high, dtype, 0, 2, (0, 2))
        result = F.randint(math.ceil(low), math.ceil(high), shape, device=device, dtype=dtype)
    elif dtype in _INTEGRAL:
        info = F.iinfo(dtype)
        # randint's high is exclusive; int64's largest value cannot be exceeded by one.
        highest = info.max + (0 if dtype is F.int64 else 1)
        low, high = _check_range(low, high, dtype, info.min, highest, (-9, 10))
        result = F.randint(math.ceil(low), math.ceil(high), shape, device=device, dtype=dtype)
    elif dtype in _FLOATING + _COMPLEX:
        info = F.finfo(dtype)
        low, high = _check_range(low, high, dtype, info.min, info.max, (-9, 9))
        result = F.empty(shape, device=device, dtype=dtype)
        _uniform_(F.view_as_real(result) if dtype in _COMPLEX else result, low, high)
    else:
        raise TypeError(
            f"The requested dtype '{dtype}' is not supported by flambeau.testing.make_tensor()."
        )

    if noncontiguous:
        result = result[..., 1::2]
    elif memory_format is not None:
        result = result.clone(memory_format=memory_format)
    if exclude_zero:
        result[result == 0] = 1 if exact else F.finfo(dtype).tiny
    if not exact:
        result.requires_grad = requires_grad
    return result
