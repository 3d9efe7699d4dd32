"""assert_close: compare tensors, scalars and nested containers of them, as PyTorch does.

Comparison happens in two passes, as in PyTorch: first the inputs are walked and
paired up (sequences elementwise, mappings by key), which fails on structure
(length, keys) or on inputs no pair handles; then every pair is compared and the
first failure is raised, naming the item it occurred for.
"""

from __future__ import annotations

import cmath
import collections.abc
from collections.abc import Callable
from typing import Any

import numpy as np

import flambeau as F

__all__ = ["assert_close", "default_tolerances"]

# (rtol, atol) per dtype; every other dtype (integers, bool) compares exactly.
_PRECISIONS = {
    "float16": (1e-3, 1e-5),
    "bfloat16": (1.6e-2, 1e-5),
    "float32": (1.3e-6, 1e-5),
    "float64": (1e-7, 1e-7),
    "complex32": (1e-3, 1e-5),
    "complex64": (1.3e-6, 1e-5),
    "complex128": (1e-7, 1e-7),
}
_DTYPE_PRECISIONS = {
    getattr(F, name): tols for name, tols in _PRECISIONS.items() if hasattr(F, name)
}


def _number_dtype(x):
    """The dtype whose tolerances a Python number compares with (int and bool: int64)."""
    if isinstance(x, complex):
        return F.complex128
    return F.float64 if isinstance(x, float) else F.int64


class _Failure(Exception):
    """A comparison failure on its way out: the exception type to raise, its message, and
    the path (indices and keys) of the item it occurred for."""

    def __init__(self, kind: type[Exception], message: str, path: tuple = ()):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.path = path

    def to_error(self, msg: str | Callable[[str], str] | None = None) -> Exception:
        if isinstance(msg, str):
            return self.kind(msg)
        text = self.message
        if self.path:
            text += "\n\nThe failure occurred for item " + "".join(f"[{p!r}]" for p in self.path)
        return self.kind(msg(text) if callable(msg) else text)


class _Unsupported(Exception):
    """Raised by a pair type that cannot handle the inputs: the next one is tried."""


def default_tolerances(*inputs, dtype_precisions: dict | None = None) -> tuple[float, float]:
    """The loosest (rtol, atol) among the dtypes of ``inputs`` (tensors or dtypes)."""
    table = dtype_precisions or _DTYPE_PRECISIONS
    rtols, atols = [], []
    for x in inputs:
        if isinstance(x, F.Tensor):
            x = x.dtype
        elif not isinstance(x, F.dtype):
            raise TypeError(
                f"Expected a flambeau.Tensor or a flambeau.dtype, but got {type(x)} instead."
            )
        rtol, atol = table.get(x, (0.0, 0.0))
        rtols.append(rtol)
        atols.append(atol)
    return max(rtols), max(atols)


def _tolerances(*dtypes, rtol, atol, path) -> tuple[float, float]:
    if (rtol is None) != (atol is None):
        raise _Failure(
            ValueError,
            "Both 'rtol' and 'atol' must be either specified or omitted, "
            f"but got no {'rtol' if rtol is None else 'atol'}.",
            path,
        )
    if rtol is not None:
        return rtol, atol
    return default_tolerances(*dtypes)


def _diff_line(kind: str, diff, index, tol, exact: bool) -> str:
    if index is None:
        line = f"{kind.title()} difference: {diff}"
    else:
        line = f"Greatest {kind} difference: {diff} at index {index}"
    return line if exact else f"{line} (up to {tol} allowed)"


def _mismatch_message(what, extra, abs_diff, abs_index, atol, rel_diff, rel_index, rtol) -> str:
    exact = rtol == 0 and atol == 0
    lines = [
        f"{what} are not {'equal' if exact else 'close'}!",
        "",
        extra,
        _diff_line("absolute", abs_diff, abs_index, atol, exact),
        _diff_line("relative", rel_diff, rel_index, rtol, exact),
    ]
    return "\n".join(lines)


def _scalar_message(actual, expected, rtol, atol) -> str:
    abs_diff = abs(actual - expected)
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    return _mismatch_message(
        "Scalars",
        f"Expected {expected} but got {actual}.",
        abs_diff,
        None,
        atol,
        rel_diff,
        None,
        rtol,
    )


def _unravel(flat: int, shape) -> tuple:
    index = []
    for size in reversed(tuple(shape)):
        flat, rest = divmod(flat, size)
        index.append(rest)
    return tuple(reversed(index))


def _tensor_message(actual, expected, matches, rtol, atol) -> str:
    total = matches.numel()
    mismatched = total - int(matches.sum())
    extra = f"Mismatched elements: {mismatched} / {total} ({mismatched / total:.1%})"
    a, e, m = actual.flatten(), expected.flatten(), matches.flatten()
    if not (a.dtype.is_floating_point or a.dtype.is_complex):
        a, e = a.to(F.int64), e.to(F.int64)  # no overflow, and bool subtracts
    abs_diff = (a - e).abs()
    abs_diff[m] = 0  # only mismatches compete for the greatest difference
    rel_diff = abs_diff / e.abs()
    rel_diff[m] = 0
    max_abs, abs_at = abs_diff.max(0)
    max_rel, rel_at = rel_diff.max(0)
    return _mismatch_message(
        "Tensor-likes",
        extra,
        max_abs.item(),
        _unravel(int(abs_at), matches.shape),
        atol,
        max_rel.item(),
        _unravel(int(rel_at), matches.shape),
        rtol,
    )


class _NonePair:
    def __init__(self, actual, expected, path, **_):
        if actual is not None and expected is not None:
            raise _Unsupported
        self.actual, self.expected, self.path = actual, expected, path

    def compare(self) -> None:
        if not (self.actual is None and self.expected is None):
            raise _Failure(
                AssertionError, f"None mismatch: {self.actual} is not {self.expected}", self.path
            )


class _BooleanPair:
    def __init__(self, actual, expected, path, **_):
        if not all(isinstance(x, (bool, np.bool_)) for x in (actual, expected)):
            raise _Unsupported
        self.actual, self.expected, self.path = bool(actual), bool(expected), path

    def compare(self) -> None:
        if self.actual is not self.expected:
            raise _Failure(
                AssertionError,
                f"Booleans mismatch: {self.actual} is not {self.expected}",
                self.path,
            )


class _NumberPair:
    def __init__(self, actual, expected, path, *, rtol, atol, equal_nan, check_dtype, **_):
        kinds = (int, float, complex, np.number)
        if not all(isinstance(x, kinds) for x in (actual, expected)):
            raise _Unsupported
        self.actual, self.expected = (
            x.item() if isinstance(x, np.number) else x for x in (actual, expected)
        )
        self.path = path
        self.rtol, self.atol = _tolerances(
            *(_number_dtype(x) for x in (self.actual, self.expected)),
            rtol=rtol,
            atol=atol,
            path=path,
        )
        self.equal_nan = equal_nan
        self.check_dtype = check_dtype

    def compare(self) -> None:
        actual, expected = self.actual, self.expected
        if self.check_dtype and type(actual) is not type(expected):
            raise _Failure(
                AssertionError,
                f"The (d)types do not match: {type(actual)} != {type(expected)}.",
                self.path,
            )
        if actual == expected:
            return
        if self.equal_nan and cmath.isnan(actual) and cmath.isnan(expected):
            return
        diff = abs(actual - expected)
        if cmath.isfinite(diff) and diff <= self.atol + self.rtol * abs(expected):
            return
        raise _Failure(
            AssertionError, _scalar_message(actual, expected, self.rtol, self.atol), self.path
        )


def _layout(t):
    # Every flambeau tensor is strided; a layout attribute, where one exists, is compared.
    return getattr(t, "layout", None)


class _TensorLikePair:
    def __init__(
        self,
        actual,
        expected,
        path,
        *,
        allow_subclasses,
        rtol,
        atol,
        equal_nan,
        check_device,
        check_dtype,
        check_layout,
        check_stride,
    ):
        related = isinstance(actual, type(expected)) or isinstance(expected, type(actual))
        if not related or (not allow_subclasses and type(actual) is not type(expected)):
            raise _Unsupported
        self.actual, self.expected = (self._as_tensor(x) for x in (actual, expected))
        self.path = path
        self.rtol, self.atol = _tolerances(
            self.actual.dtype, self.expected.dtype, rtol=rtol, atol=atol, path=path
        )
        self.equal_nan = equal_nan
        self.check_device = check_device
        self.check_dtype = check_dtype
        self.check_layout = check_layout
        self.check_stride = check_stride

    @staticmethod
    def _as_tensor(x):
        if isinstance(x, F.Tensor):
            return x
        try:
            return F.as_tensor(x)
        except Exception as e:
            raise _Unsupported from e

    def _fail(self, message: str):
        raise _Failure(AssertionError, message, self.path)

    def _check_attribute(self, name: str, actual, expected) -> None:
        if actual != expected:
            self._fail(f"The values for attribute '{name}' do not match: {actual} != {expected}.")

    def compare(self) -> None:
        actual, expected = self.actual, self.expected
        self._check_attribute("shape", actual.shape, expected.shape)
        if _layout(actual) != _layout(expected):
            if self.check_layout:
                self._check_attribute("layout", _layout(actual), _layout(expected))
        elif self.check_stride:
            self._check_attribute("stride()", actual.stride(), expected.stride())
        if self.check_device:
            self._check_attribute("device", actual.device, expected.device)
        if self.check_dtype:
            self._check_attribute("dtype", actual.dtype, expected.dtype)
        actual, expected = self._equalize(actual, expected)
        self._compare_values(actual, expected)

    @staticmethod
    def _equalize(actual, expected):
        if actual.device != expected.device:
            actual, expected = actual.cpu(), expected.cpu()
        if actual.dtype != expected.dtype:
            common = F.promote_types(actual.dtype, expected.dtype)
            actual, expected = actual.to(common), expected.to(common)
        return actual, expected

    def _compare_values(self, actual, expected) -> None:
        matches = F.isclose(
            actual, expected, rtol=self.rtol, atol=self.atol, equal_nan=self.equal_nan
        )
        if bool(matches.all()):
            return
        if actual.dim() == 0:
            message = _scalar_message(actual.item(), expected.item(), self.rtol, self.atol)
        else:
            message = _tensor_message(actual, expected, matches, self.rtol, self.atol)
        self._fail(message)


_PAIR_TYPES = (_NonePair, _BooleanPair, _NumberPair, _TensorLikePair)


def _is_sequence(x) -> bool:
    # A str is a sequence of strs, without end: it is compared as a whole.
    return isinstance(x, collections.abc.Sequence) and not isinstance(x, str)


def _pairs(actual, expected, path: tuple, options: dict) -> list:
    if _is_sequence(actual) and _is_sequence(expected):
        if len(actual) != len(expected):
            raise _Failure(
                AssertionError,
                f"The length of the sequences mismatch: {len(actual)} != {len(expected)}",
                path,
            )
        out = []
        for i in range(len(actual)):
            out.extend(_pairs(actual[i], expected[i], (*path, i), options))
        return out
    if isinstance(actual, collections.abc.Mapping) and isinstance(
        expected, collections.abc.Mapping
    ):
        actual_keys, expected_keys = set(actual.keys()), set(expected.keys())
        if actual_keys != expected_keys:
            raise _Failure(
                AssertionError,
                "The keys of the mappings do not match:\n"
                f"Missing keys in the actual mapping: {sorted(expected_keys - actual_keys)}\n"
                f"Additional keys in the actual mapping: {sorted(actual_keys - expected_keys)}",
                path,
            )
        try:
            keys = sorted(actual_keys)  # a deterministic order where the keys have one
        except TypeError:
            keys = list(actual.keys())
        out = []
        for key in keys:
            out.extend(_pairs(actual[key], expected[key], (*path, key), options))
        return out
    for pair_type in _PAIR_TYPES:
        try:
            return [pair_type(actual, expected, path, **options)]
        except _Unsupported:
            continue
    raise _Failure(
        TypeError,
        "No comparison pair was able to handle inputs of type "
        f"{type(actual)} and {type(expected)}.",
        path,
    )


def assert_close(
    actual: Any,
    expected: Any,
    *,
    allow_subclasses: bool = True,
    rtol: float | None = None,
    atol: float | None = None,
    equal_nan: bool = False,
    check_device: bool = True,
    check_dtype: bool = True,
    check_layout: bool = True,
    check_stride: bool = False,
    msg: str | Callable[[str], str] | None = None,
) -> None:
    """Asserts that ``actual`` and ``expected`` are close, raising AssertionError if not.

    Tensors (and NumPy arrays, which are compared as tensors) are close when they have the
    same shape and, unless the matching ``check_*`` flag is off, the same device, dtype,
    layout and (``check_stride=True``) strides, and every element satisfies
    ``|actual - expected| <= atol + rtol * |expected|``; infinities must be equal, and NaNs
    are equal only with ``equal_nan=True``. With a check off, tensors are moved to the CPU
    or promoted to a common dtype before their values are compared.

    ``rtol`` and ``atol`` are given together or not at all; omitted, they are the loosest of
    the defaults of the two dtypes: float16 (1e-3, 1e-5), bfloat16 (1.6e-2, 1e-5), float32
    (1.3e-6, 1e-5), float64 (1e-7, 1e-7), complex64 (1.3e-6, 1e-5), complex128 (1e-7,
    1e-7), and (0, 0) (equality) for every other dtype. Python ``int``, ``float`` and
    ``complex`` compare with the defaults of int64, float64 and complex128, and need
    ``check_dtype=False`` to be compared across types.

    Sequences and mappings are compared elementwise (their lengths or keys must match),
    and the failure message then names the item. ``msg`` replaces the message (a str) or
    receives it and returns the one to raise (a callable). Inputs of unrelated types (a
    tensor and a list, say) raise TypeError; ``allow_subclasses=False`` requires equal types.

    >>> from flambeau.testing import assert_close
    >>> x = flambeau.tensor([1.0, 2.0, 3.0])
    >>> assert_close(x, x + 1e-7)  # close: nothing happens
    >>> assert_close(x, flambeau.tensor([1.0, 2.0, 3.1]))
    Traceback (most recent call last):
      ...
    AssertionError: Tensor-likes are not close!
    <BLANKLINE>
    Mismatched elements: 1 / 3 (33.3%)
    Greatest absolute difference: 0.0999999... at index (2,) (up to 1e-05 allowed)
    Greatest relative difference: 0.0322580... at index (2,) (up to 1.3e-06 allowed)
    """
    __tracebackhide__ = True
    options = dict(
        allow_subclasses=allow_subclasses,
        rtol=rtol,
        atol=atol,
        equal_nan=equal_nan,
        check_device=check_device,
        check_dtype=check_dtype,
        check_layout=check_layout,
        check_stride=check_stride,
    )
    try:
        pairs = _pairs(actual, expected, (), options)
    except _Failure as failure:  # structure or types: msg does not apply, as in PyTorch
        raise failure.to_error() from None
    for pair in pairs:
        try:
            pair.compare()
        except _Failure as failure:
            raise failure.to_error(msg) from None
