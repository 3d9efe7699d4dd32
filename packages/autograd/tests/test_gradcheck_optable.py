"""gradcheck and gradgradcheck over the core's operator table.

Every row of the operator table (shared/flambeau_testing/optable) whose operator has a
derivative formula is checked in float64 (and complex128 where the row has complex dtypes)
on its own sample inputs (non-contiguous and broadcast ones included), skipping samples
too large for finite differences.
Tensor-list arguments are spread into separate gradcheck inputs (and rebuilt for
the call), list outputs are flattened, and ROW_CHECKS adapts the check for rows
whose outputs are not 64-bit.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest

import flambeau as F
from flambeau.autograd import derivatives, gradcheck, gradgradcheck
from flambeau.autograd.derivatives import foreach
from flambeau_testing.optable import all_tests

MAX_NUMEL = 48


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
    "heaviside",  # whose formula raises, as PyTorch has none
    "heaviside_inplace",
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
# Formulas that raise, as PyTorch has no derivative: test_linalg_composites_grad.py checks
# that backward raises.
NO_DERIVATIVE = {"linalg_ldl_factor", "linalg_ldl_factor_ex", "linalg_ldl_solve"}


@dataclass(frozen=True)
class RowCheck:
    """How gradcheck treats one row (by id) where the defaults don't fit."""

    eps: float = 1e-6
    output: Callable | None = None  # applied to each output tensor before checking
    takes: Callable = lambda sample: True  # which of the row's samples to check
    constants: tuple = ()  # positions of array arguments that are not differentiable


def _on_grid(step, count):
    """Samples whose floating arrays are integer multiples k*step with |k| < count."""

    def takes(sample):
        floats = [a for a in _arrays(sample) if a.dtype.kind in "fc"]
        k = [np.asarray(a, dtype=np.float64) / step for a in floats]
        return bool(floats) and all(np.all(x == np.round(x)) and np.all(abs(x) < count) for x in k)

    return takes


# Dtype casts to 16- and 32-bit floats: checked through float64 copies of their outputs, on
# samples that are multiples of a power-of-two eps with few enough significant bits for
# bfloat16 (8), so x, x + eps and x - eps all convert exactly and central differences are
# exact.
_CAST_EPS = 2.0**-4
ROW_CHECKS = {
    name: RowCheck(eps=_CAST_EPS, output=lambda t: t.double(), takes=_on_grid(_CAST_EPS, 256))
    for name in ("float", "half", "bfloat16")
}


def _away_from_jumps(sample, eps=1e-6):
    """fmod/remainder samples a, b whose quotient a/b stays clear of integers (where the
    result jumps) when finite differences move a or b by eps."""
    a, b = (np.asarray(v, dtype=np.float64) for v in sample.args)
    q = a / b
    reach = eps * (1 + np.abs(q)) / np.abs(b)  # how far a/b moves
    return bool(np.all(np.abs(q - np.round(q)) > 10 * reach))


ROW_CHECKS |= {name: RowCheck(takes=_away_from_jumps) for name in ("fmod", "remainder")}
# The scalars tensor of addcmul/addcdiv's .Tensor overloads holds one constant per list
# element (PyTorch reads it as numbers): no gradient.
ROW_CHECKS |= {
    f"_foreach_{op}.Tensor{inplace}": RowCheck(constants=(3,))
    for op in ("addcmul", "addcdiv")
    for inplace in ("", "_")
}


# The layer backward's own gradients (third order through gradgradcheck) are the slowest
# rows of the suite: one sample per mode covers LSTM (packed, projection), GRU and RNN; the
# forward row checks every sample.
_RNN_BACKWARD_SAMPLES = {
    "LSTM packed proj=1 reverse=True",
    "GRU padded proj=0 reverse=True",
    "RNN_TANH packed proj=0 reverse=False",
}
ROW_CHECKS["_rnn_layer_backward"] = RowCheck(takes=lambda s: s.note in _RNN_BACKWARD_SAMPLES)


# zeta, igamma and igammac have a derivative in their second argument only (PyTorch raises
# for the first).
_SECOND_ARGUMENT_ONLY = "special_zeta igamma igamma_large igamma_method igamma_inplace igammac"
_SECOND_ARGUMENT_ONLY += " igammac_large igammac_inplace"
ROW_CHECKS |= {name: RowCheck(constants=(0,)) for name in _SECOND_ARGUMENT_ONLY.split()}


def differentiable_rows():
    rows = []
    for op in all_tests():
        f = derivatives.FORMULAS.get(op.name)
        if f is None and (op.name in derivatives.COMPOSITES or foreach.is_recorded(op.name)):
            f = derivatives.Formula(None)  # recorded as its decomposition
        if f is None or f.nondifferentiable:
            continue
        skipped = (
            op.id in PIECEWISE_CONSTANT
            or op.id in ON_KINK
            or op.id in CHECKED_ELSEWHERE
            or op.id in NO_DERIVATIVE
        )
        if skipped or op.name in SAMPLED:
            continue
        for dtype in ("float64", "complex128"):
            if dtype in op.dtypes and not (dtype == "complex128" and op.name in COMPLEX_SKIP):
                rows.append(pytest.param(op, dtype, id=f"{op.id}-{dtype}"))
    return rows


def _is_tensor_list(a):
    """Only lists (or tuples) of arrays are Tensor[] arguments; lists of ints stay as they are."""
    return isinstance(a, (list, tuple)) and bool(a) and all(isinstance(x, np.ndarray) for x in a)


def _arrays(sample):
    """Every array of a sample, the elements of its tensor lists included."""
    for a in sample.args:
        if isinstance(a, np.ndarray):
            yield a
        elif _is_tensor_list(a):
            yield from a


def _tensor(a, differentiable=True):
    """A tensor with a's values and strides (non-contiguous samples stay non-contiguous)."""
    if a.ndim and not a.flags.c_contiguous and min(a.strides) >= 0:
        extent = sum((n - 1) * s for n, s in zip(a.shape, a.strides)) + a.itemsize
        buf = np.zeros(extent // a.itemsize, a.dtype)
        view = np.lib.stride_tricks.as_strided(buf, a.shape, a.strides)
        view[...] = a
        t = F.from_numpy(buf).as_strided(a.shape, [s // a.itemsize for s in a.strides])
    else:
        t = F.from_numpy(a.copy())
    wanted = differentiable and a.dtype in (np.float64, np.complex128)
    return t.requires_grad_(True) if wanted else t


def _flatten(args, constants=()):
    """Sample args -> (gradcheck inputs, rebuild). Arrays become tensors and each tensor
    list is spread into separate inputs; rebuild(inputs) gives the call's arguments."""
    inputs, layout = [], []  # layout: (list type or None, where in inputs, constant)
    for i, a in enumerate(args):
        if isinstance(a, np.ndarray):
            layout.append((None, len(inputs), None))
            inputs.append(_tensor(a, i not in constants))
        elif _is_tensor_list(a):
            layout.append((type(a), slice(len(inputs), len(inputs) + len(a)), None))
            inputs += [_tensor(x) for x in a]
        else:
            layout.append((None, None, a))

    def rebuild(xs):
        return [
            a if at is None else xs[at] if kind is None else kind(xs[at]) for kind, at, a in layout
        ]

    return inputs, rebuild


def _clone_target(a):
    """An in-place row's first argument as a non-leaf copy (every element of a list)."""
    if isinstance(a, (list, tuple)):
        return type(a)(x.clone() if isinstance(x, F.Tensor) else x for x in a)
    return a.clone() if isinstance(a, F.Tensor) else a


def _float_outputs(out):
    """The floating and complex tensors of an output, lists and tuples flattened."""
    if isinstance(out, (list, tuple)):
        return tuple(t for o in out for t in _float_outputs(o))
    if isinstance(out, F.Tensor) and (out.dtype.is_floating_point or out.dtype.is_complex):
        return (out,)
    return ()


@pytest.mark.parametrize("op,dtype", differentiable_rows())
def test_gradcheck_row(op, dtype):
    rng = np.random.default_rng(0)
    spec = ROW_CHECKS.get(op.id, RowCheck())
    checked = 0
    for sample in op.samples(dtype, rng):
        arrays = list(_arrays(sample))
        if not arrays or any(a.size > MAX_NUMEL or a.size == 0 for a in arrays):
            continue
        if not spec.takes(sample):
            continue
        inputs, rebuild = _flatten(sample.args, spec.constants)
        if not any(x.requires_grad for x in inputs):
            continue

        def fn(*xs, _kw=sample.kwargs, _rebuild=rebuild):
            args = _rebuild(xs)
            if op.name.endswith("_"):  # in-place rows: work on a non-leaf copy
                args[0] = _clone_target(args[0])
            outs = _float_outputs(op.fn(*args, **_kw))
            return tuple(map(spec.output, outs)) if spec.output else outs

        outs = fn(*inputs)
        if not outs or any(o.dtype not in (F.float64, F.complex128) for o in outs):
            continue  # finite differences need 64-bit outputs (see ROW_CHECKS)
        assert gradcheck(fn, tuple(inputs), eps=spec.eps, atol=1e-5, rtol=1e-3)
        assert gradgradcheck(fn, tuple(inputs), eps=spec.eps, atol=1e-4, rtol=1e-3)
        checked += 1
    if checked == 0:
        pytest.skip(f"{op.id}: no sample small enough for finite differences")
