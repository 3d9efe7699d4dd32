"""The operator test table.

Every operator in ``flambeau.ops_table()`` has one or more ``OpTest`` rows here,
in the family module it belongs to (pointwise.py, reduction.py, ...). A row
says how to call the operator, how to compute the same thing with NumPy, and
which inputs to try. tensor-core's ``tests/test_ops.py`` runs every row over its
samples and dtypes against NumPy; ``flambeau_testing.check_on_device`` runs the
same rows on another device against the CPU.

Loading the table needs NumPy alone (a backend's environment may have nothing
else); SciPy and pytest are imported when a NumPy reference that needs them runs.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

FLOATS = ("float32", "float64")
INTS = ("int32", "int64")
ALL_REAL = ("uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64")
COMPLEX = ("complex64", "complex128")
# (rtol, atol) by dtype where a row sets none; integer and bool results compare exactly.
TOLERANCES = {
    "float16": (1e-2, 1e-2),
    "bfloat16": (2e-2, 2e-2),
    "float32": (1e-5, 1e-5),
    "float64": (1e-10, 1e-10),
    "complex64": (1e-5, 1e-5),
    "complex128": (1e-10, 1e-10),
}


@dataclass
class Sample:
    """Positional args (NumPy arrays become tensors) and keyword args."""

    args: tuple
    kwargs: dict = field(default_factory=dict)
    note: str = ""


@dataclass
class OpTest:
    name: str  # the operator's name in flambeau.ops_table()
    fn: Callable[..., Any]  # calls flambeau on converted args
    ref: Callable[..., Any]  # NumPy reference on the NumPy args
    samples: Callable[[str, np.random.Generator], Iterable[Sample]]  # (dtype, rng) -> samples
    dtypes: tuple = FLOATS
    rtol: float | None = None
    atol: float | None = None
    # Also check the out= and in-place variants against the reference.
    check_out: bool = False
    check_inplace: bool = False
    id: str = ""

    def __post_init__(self):
        self.id = self.id or self.name

    def tolerances(self, dtype: str) -> tuple[float, float]:
        """(rtol, atol) for results of this row's `dtype` runs: the row's own where set,
        else the dtype's default in TOLERANCES.

        >>> OpTest("abs", abs, abs, lambda dtype, rng: [], atol=1e-3).tolerances("float32")
        (1e-05, 0.001)
        """
        rtol, atol = TOLERANCES.get(dtype, (0, 0))
        return (
            self.rtol if self.rtol is not None else rtol,
            self.atol if self.atol is not None else atol,
        )


def numpy_dtype(name: str):
    return np.float32 if name == "bfloat16" else np.dtype(name)


def make(shape, dtype: str, rng: np.random.Generator, *, low=-3.0, high=3.0, noncontig=False):
    """A NumPy array of `shape`; noncontig gives a strided (every other column) view."""
    shape = tuple(shape)
    full = shape[:-1] + (shape[-1] * 2,) if noncontig and shape else shape
    if dtype == "bool":
        arr = rng.random(full) > 0.5
    elif np.issubdtype(numpy_dtype(dtype), np.integer):
        info = np.iinfo(numpy_dtype(dtype))
        lo, hi = max(int(low), info.min), min(int(high), info.max)
        arr = rng.integers(lo, hi + 1, size=full).astype(numpy_dtype(dtype))
    elif np.issubdtype(numpy_dtype(dtype), np.complexfloating):
        arr = (rng.uniform(low, high, full) + 1j * rng.uniform(low, high, full)).astype(dtype)
    else:
        arr = rng.uniform(low, high, full).astype(numpy_dtype(dtype))
    if noncontig and shape:
        arr = arr[..., ::2]
    if dtype in ("bfloat16", "float16"):  # values exactly representable in the 16-bit type
        arr = _round16(arr, dtype)
    return np.asarray(arr) if not shape else arr


def _round16(arr, dtype):
    import flambeau

    # np.array, not np.ascontiguousarray: that one makes a 0-dim array 1-dim.
    t = flambeau.from_numpy(np.array(arr, dtype=np.float32, order="C")).to(getattr(flambeau, dtype))
    return t.to(flambeau.float32).numpy().astype(np.float32 if dtype == "bfloat16" else np.float16)


def scipy_special():
    """scipy.special, imported when a reference needs it; the calling test skips without it.

    >>> float(scipy_special().gamma(5.0))
    24.0
    """
    import pytest

    return pytest.importorskip("scipy.special")


def unary_samples(dtype, rng, low=-3.0, high=3.0):
    yield Sample((make((), dtype, rng, low=low, high=high),), note="0-dim")
    yield Sample((make((0,), dtype, rng, low=low, high=high),), note="empty")
    yield Sample((make((7,), dtype, rng, low=low, high=high),))
    yield Sample((make((3, 5), dtype, rng, low=low, high=high, noncontig=True),), note="strided")
    yield Sample((make((4, 3), dtype, rng, low=low, high=high).T,), note="transposed")
    yield Sample((make((2, 3, 40), dtype, rng, low=low, high=high),))


def binary_samples(dtype, rng, low=-3.0, high=3.0, scalar=None):
    m = lambda shape, **kw: make(shape, dtype, rng, low=low, high=high, **kw)  # noqa: E731
    yield Sample((m((5,)), m((5,))))
    yield Sample((m((3, 4), noncontig=True), m((4,))), note="broadcast strided")
    yield Sample((m((2, 1, 4)), m((3, 1))), note="broadcast both")
    yield Sample((m(()), m((3,))), note="0-dim with 1-d")
    yield Sample((m((0, 3)), m((3,))), note="empty")
    yield Sample((m((4, 3)).T, m((3, 4))), note="transposed")
    if scalar is not None:
        yield Sample((m((2, 3)), scalar), note="python scalar")


def all_tests() -> list[OpTest]:
    tests: list[OpTest] = []
    for mod in pkgutil.iter_modules(__path__):
        tests += importlib.import_module(f"{__name__}.{mod.name}").TESTS
    return tests


# Operators whose results cannot be compared to a reference (uninitialized or
# random memory); each is covered by the test of packages/tensor-core/tests named here.
NO_REFERENCE = {
    "empty": "test_creation.py::test_empty_shape_and_dtype",
    "rand": "test_random.py::test_uniform_statistics",
    "randn": "test_random.py::test_normal_statistics",
    "rand_like": "test_random.py::test_like_samplers",
    "randn_like": "test_random.py::test_like_samplers",
    "exponential_": "test_random.py::test_distribution_fits",
    "geometric_": "test_random.py::test_geometric",
    "cauchy_": "test_random.py::test_distribution_fits",
    "log_normal_": "test_random.py::test_distribution_fits",
}
