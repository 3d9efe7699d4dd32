"""gradcheck and gradgradcheck over the core's operator table.

Every row of packages/tensor-core/tests/optable whose operator has a derivative
formula is checked in float64 (and complex128 where the row has complex dtypes) on
its own sample inputs (non-contiguous and
broadcast ones included), skipping samples too large for finite differences.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import flambeau as F
from flambeau.autograd import derivatives, gradcheck, gradgradcheck

CORE_TESTS = Path(__file__).resolve().parents[2] / "tensor-core" / "tests"
sys.path.insert(0, str(CORE_TESTS))
from optable import all_tests  # noqa: E402

MAX_NUMEL = 48
# Rows whose samples sit on kinks or outside the function's smooth domain.
NOT_SMOOTH = {
    "abs",
    "sign",
    "sgn",
    "floor",
    "ceil",
    "round",
    "trunc",
    "frac",
    "relu",
    "clamp",
    "clip",
    "clamp_min",
    "clamp_max",
    "maximum",
    "minimum",
    "fmax",
    "fmin",
    "max",
    "min",
    "amax",
    "amin",
    "norm",
    "nan_to_num",
    "copysign",
    "remainder",
    "fmod",
    "where",
    "max.dim",
    "min.dim",
    "linalg_vector_norm",
    "linalg_matrix_norm",
    "linalg_norm",
}


# Piecewise constant: the derivative is zero where it exists, and finite
# differences straddling a jump are meaningless.
PIECEWISE_CONSTANT = {
    "div_trunc",
    "div_floor",
    "round",
    "floor",
    "ceil",
    "trunc",
    "sign",
    "sgn",
    "angle",  # of real input (the complex rows are "angle_complex")
}
# Random sampling: PyTorch defines the gradient of a sample w.r.t. its parameters as zero
# (no reparametrization), which finite differences of a seeded sampler do not see;
# tests/test_formula_coverage.py checks those zeros.
SAMPLED = {
    "normal",
    "bernoulli",
    "bernoulli_",
    "poisson",
    "uniform_",
    "normal_",
    "random_",
    "exponential_",
    "geometric_",
    "cauchy_",
    "log_normal_",
}
# Rows whose samples deliberately sit on a kink (relu's rows include exact zeros and NaN).
ON_KINK = {"relu"}
# Formulas whose own derivative is not available yet.
FIRST_ORDER_ONLY: set[str] = set()
# nn rows with kinks (piecewise linear, or a second derivative that jumps).
NOT_SMOOTH |= {
    "hardtanh",
    "relu6",
    "leaky_relu",
    "threshold",
    "softshrink",
    "hardshrink",
    "hardswish",
    "hardsigmoid",
    "l1_loss",
    "smooth_l1_loss",
    "huber_loss",
    "smooth_l1_loss_backward",
    "huber_loss_backward",
}


# Complex rows not checked: kinks (abs, sgn, the norms' zero and extremal-entry kinks).
# The decompositions' rows differentiate phase-invariant compositions (U S Vh, U^H U,
# V diag(w) V^H, Q R, ...): complex eigenvectors and singular vectors are free up to a
# phase per column, so only such functions of them have a gradient.
COMPLEX_SKIP = {
    "abs",
    "sgn",
    "norm",
    "linalg_vector_norm",
    "linalg_matrix_norm",
    "linalg_norm",
}

# Rows checked in their own test file instead: linalg_lstsq's row also returns the
# singular values (not differentiable, as in PyTorch) and linalg_eigvals' row sorts the
# eigenvalues through NumPy. See tests/test_linalg_eig_lstsq_grad.py.
CHECKED_ELSEWHERE = {"linalg_lstsq", "linalg_eigvals"}


def differentiable_rows():
    rows = []
    for op in all_tests():
        f = derivatives.FORMULAS.get(op.name)
        if f is None and op.name in derivatives.COMPOSITES:  # recorded as its decomposition
            f = derivatives.Formula(None)
        if f is None or f.nondifferentiable:
            continue
        skipped = op.id in PIECEWISE_CONSTANT or op.id in ON_KINK or op.id in CHECKED_ELSEWHERE
        if skipped or op.name in SAMPLED:
            continue
        for dtype in ("float64", "complex128"):
            if dtype in op.dtypes and not (dtype == "complex128" and op.name in COMPLEX_SKIP):
                rows.append(pytest.param(op, dtype, id=f"{op.id}-{dtype}"))
    return rows


def _inputs(sample):
    tensors = []
    for a in sample.args:
        if isinstance(a, np.ndarray) and a.dtype in (np.float64, np.complex128):
            tensors.append(F.from_numpy(a.copy()).requires_grad_(True))
        elif isinstance(a, (list, tuple)) and a and isinstance(a[0], np.ndarray):
            tensors.append(type(a)(F.from_numpy(x.copy()).requires_grad_(True) for x in a))
        elif isinstance(a, np.ndarray):
            tensors.append(F.from_numpy(a.copy()))
        else:
            tensors.append(a)
    return tensors


@pytest.mark.parametrize("op,dtype", differentiable_rows())
def test_gradcheck_row(op, dtype):
    rng = np.random.default_rng(0)
    checked = 0
    for sample in op.samples(dtype, rng):
        arrays = [a for a in sample.args if isinstance(a, np.ndarray)]
        if not arrays or any(a.size > MAX_NUMEL or a.size == 0 for a in arrays):
            continue
        if any(isinstance(a, (list, tuple)) for a in sample.args):
            continue
        inputs = _inputs(sample)
        diff = [i for i, x in enumerate(inputs) if isinstance(x, F.Tensor) and x.requires_grad]
        if not diff:
            continue

        def fn(*xs, _kw=sample.kwargs):
            if op.name.endswith("_"):  # in-place rows: work on a non-leaf copy
                xs = (xs[0].clone(), *xs[1:])
            out = op.fn(*xs, **_kw)
            return (
                out
                if not isinstance(out, tuple)
                else tuple(
                    o
                    for o in out
                    if isinstance(o, F.Tensor) and (o.dtype.is_floating_point or o.dtype.is_complex)
                )
            )

        outs = fn(*inputs)
        outs = outs if isinstance(outs, tuple) else (outs,)
        if any(o.dtype not in (F.float64, F.complex128) for o in outs):
            continue  # finite differences need 64-bit outputs (e.g. not .float(), .half())
        assert gradcheck(fn, tuple(inputs), atol=1e-5, rtol=1e-3)
        if op.name not in NOT_SMOOTH and op.name not in FIRST_ORDER_ONLY:
            assert gradgradcheck(fn, tuple(inputs), atol=1e-4, rtol=1e-3)
        checked += 1
    if checked == 0:
        pytest.skip(f"{op.id}: no sample small enough for finite differences")
