"""Runs operator-table rows on another device and compares each result with the CPU's.

The CPU is the reference here (tensor-core's test_ops.py checks it against NumPy), so
a backend is held to exactly what the CPU computes for the same call: the same
structure, dtypes and shapes, integer and bool values equal, floating values within the
row's tolerances, and NaN in the same places. A call the device has no kernel for
raises NotImplementedError: that case is skipped with the backend's message as the
reason, never counted as passed.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np

import flambeau

from .convert import to_flambeau, to_numpy
from .optable import OpTest, Sample


@dataclass
class DeviceReport:
    """What :func:`check_on_device` found for one row on one device, case by case (a case
    is one sample of one dtype, named ``<row id>-<dtype>[<sample index>]``).

    >>> report = DeviceReport("add", "cpu", checked=["add-float32[0]"])
    >>> report.ok, report.skipped
    (True, [])
    """

    row: str
    device: str
    checked: list[str] = field(default_factory=list)  # compared, and equal to the CPU's
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (case, reason)
    mismatches: list[tuple[str, str]] = field(default_factory=list)  # (case, what differs)

    @property
    def ok(self) -> bool:
        """No case differed from the CPU (skipped cases are not differences)."""
        return not self.mismatches


class _Skip(Exception):
    """A case that cannot run on the device; its message is the reason."""


def check_on_device(
    op: OpTest, device: str, dtypes: tuple[str, ...] | None = None, *, seed: int = 0
) -> DeviceReport:
    """Call `op` on each of its samples twice, with the tensors moved to `device` and on
    the CPU, and compare the results.

    Samples come from the row's generator seeded with `seed`, for each of `dtypes` (the
    row's own by default); the random generator is reseeded with `seed` before both calls,
    so random operators draw alike. Inputs move with ``.to(device)`` (a copy, so in-place
    rows never share memory between the two calls). A sample with no tensor argument is
    skipped: it would run on the CPU only.

    >>> from flambeau_testing.optable import all_tests
    >>> add = next(op for op in all_tests() if op.id == "add")
    >>> report = check_on_device(add, "cpu", ("float32",))
    >>> report.ok, len(report.checked) > 0
    (True, True)
    """
    report = DeviceReport(op.id, device)
    for dtype in dtypes if dtypes is not None else op.dtypes:
        rtol, atol = op.tolerances(dtype)
        rng = np.random.default_rng(seed)
        for i, sample in enumerate(op.samples(dtype, rng)):
            case = f"{op.id}-{dtype}[{i}]" + (f" ({sample.note})" if sample.note else "")
            try:
                difference = _run_case(op, sample, dtype, device, seed, rtol, atol)
            except _Skip as skip:
                report.skipped.append((case, str(skip)))
                continue
            if difference is None:
                report.checked.append(case)
            else:
                report.mismatches.append((case, difference))
    return report


def assert_on_device(op: OpTest, device: str, dtypes: tuple[str, ...] | None = None) -> None:
    """:func:`check_on_device` inside a pytest test: fails on any mismatch, skips (with
    the backend's reasons) when no case ran, and warns naming the cases skipped otherwise.

    >>> from flambeau_testing.optable import all_tests
    >>> assert_on_device(next(op for op in all_tests() if op.id == "mul"), "cpu", ("int64",))
    """
    import pytest

    report = check_on_device(op, device, dtypes)
    if report.mismatches:
        lines = [f"{case}: {what}" for case, what in report.mismatches]
        pytest.fail(f"{op.id} on {device} differs from the CPU:\n" + "\n".join(lines))
    reasons = sorted({reason for _, reason in report.skipped})
    if not report.checked:
        pytest.skip(f"{op.id} on {device}: " + ("; ".join(reasons) or "no sample"))
    if report.skipped:
        warnings.warn(
            f"{op.id} on {device}: {len(report.skipped)} cases skipped: " + "; ".join(reasons),
            UserWarning,
            stacklevel=2,
        )


def _run_case(op, sample: Sample, dtype, device, seed, rtol, atol) -> str | None:
    """One sample on the device, then on the CPU: None when they agree, else what differs."""
    args = [to_flambeau(a, dtype) for a in sample.args]
    if not any(_has_tensor(a) for a in args):
        raise _Skip("no tensor argument: the call never reaches the device")
    try:
        moved = [_to_device(a, device) for a in args]
        kwargs = {k: _to_device(v, device) for k, v in sample.kwargs.items()}
        flambeau.manual_seed(seed)
        on_device = op.fn(*moved, **kwargs)
    except NotImplementedError as e:
        raise _Skip(str(e) or "NotImplementedError without a message") from None
    except Exception as e:  # the CPU decides whether the call was valid
        on_device = e
    flambeau.manual_seed(seed)
    try:
        on_cpu = op.fn(*args, **sample.kwargs)
    except Exception as e:
        return f"the CPU call raised {type(e).__name__}: {e}"
    if isinstance(on_device, Exception):
        return f"the CPU returned, the device raised {type(on_device).__name__}: {on_device}"
    try:
        return _difference(on_device, on_cpu, rtol, atol, "result")
    except NotImplementedError as e:  # the device cannot copy the result back to the host
        raise _Skip(str(e) or "NotImplementedError without a message") from None


def _has_tensor(x) -> bool:
    if isinstance(x, flambeau.Tensor):
        return True
    return isinstance(x, (list, tuple)) and any(_has_tensor(v) for v in x)


def _to_device(x, device):
    """Tensors (also inside lists and tuples) copied to `device`; anything else as is."""
    if isinstance(x, flambeau.Tensor):
        return x.to(device, copy=True)
    if isinstance(x, (list, tuple)) and _has_tensor(x):
        return type(x)(_to_device(v, device) for v in x)
    return x


def _difference(got, want, rtol, atol, where: str) -> str | None:
    """How the device's result `got` differs from the CPU's `want`; None if it does not."""
    if isinstance(want, (flambeau.Tensor, np.ndarray)):
        if type(got) is not type(want):
            return f"{where}: {type(got).__name__} where the CPU gave {type(want).__name__}"
        if got.dtype != want.dtype:
            return f"{where}: dtype {got.dtype}, the CPU's is {want.dtype}"
        if tuple(got.shape) != tuple(want.shape):
            return f"{where}: shape {tuple(got.shape)}, the CPU's is {tuple(want.shape)}"
        return _value_difference(to_numpy(got), to_numpy(want), rtol, atol, where)
    if isinstance(want, (list, tuple)):
        if not isinstance(got, (list, tuple)) or len(got) != len(want):
            return f"{where}: {got!r:.80} where the CPU gave {len(want)} items"
        for k, (g, w) in enumerate(zip(got, want)):
            if (found := _difference(g, w, rtol, atol, f"{where}[{k}]")) is not None:
                return found
        return None
    if isinstance(want, (float, complex)) and isinstance(got, (int, float, complex)):
        return _value_difference(np.asarray(got), np.asarray(want), rtol, atol, where)
    return None if got == want else f"{where}: {got!r:.80}, the CPU gave {want!r:.80}"


def _value_difference(got: np.ndarray, want: np.ndarray, rtol, atol, where) -> str | None:
    if want.dtype.kind not in "fc":
        if np.array_equal(got, want):
            return None
        bad = int(np.count_nonzero(got != want))
        return f"{where}: {bad} of {want.size} values differ from the CPU's"
    nan_got, nan_want = np.isnan(got), np.isnan(want)
    if not np.array_equal(nan_got, nan_want):
        return f"{where}: NaN at {int(np.count_nonzero(nan_got != nan_want))} other positions"
    close = np.isclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
    if close.all():
        return None
    worst = float(np.max(np.abs(got[~close] - want[~close])))
    return (
        f"{where}: {int(np.count_nonzero(~close))} of {want.size} values differ from the "
        f"CPU's (largest difference {worst:.3g}; rtol={rtol}, atol={atol})"
    )
