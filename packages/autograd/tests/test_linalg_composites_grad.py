"""Gradients of flambeau.linalg's Python-composed functions (cond, diagonal,
householder_product, matrix_exp, multi_dot, tensorinv, tensorsolve, vander, vecdot),
which autograd differentiates through the operators they are made of, by gradcheck and
gradgradcheck; and the LDL functions, which have no derivative (as in PyTorch).
solve_ex and lu_factor_ex have table rows: test_gradcheck_optable.py checks them."""

from __future__ import annotations

import math

import numpy as np
import pytest

import flambeau as F
from flambeau.autograd import gradcheck, gradgradcheck

LA = F.linalg
DTYPES = ["float64", "complex128"]


def _leaf(rng, dtype, *shape, shift=0.0):
    x = rng.standard_normal(shape)
    if dtype == "complex128":
        x = x + 1j * rng.standard_normal(shape)
    if shift:
        x = x + shift * np.eye(shape[-1])
    return F.from_numpy(x).requires_grad_(True)


def _check(fn, *inputs):
    assert gradcheck(fn, inputs, atol=1e-5, rtol=1e-3)
    assert gradgradcheck(fn, inputs, atol=1e-4, rtol=1e-3)


# The norms' kinks (max/min over rows or columns, the 2-norm's largest singular value)
# sit away from random samples; 'nuc' and 'fro' are smooth for nonsingular A.
@pytest.mark.parametrize("p", [None, 2, -2, "fro", "nuc", math.inf, -math.inf, 1, -1], ids=str)
@pytest.mark.parametrize("dtype", DTYPES)
def test_cond(p, dtype):
    a = _leaf(np.random.default_rng(0), dtype, 2, 3, 3, shift=2.0)
    _check(lambda x: LA.cond(x, p), a)


@pytest.mark.parametrize("dtype", DTYPES)
def test_vecdot(dtype):
    rng = np.random.default_rng(1)
    x, y = _leaf(rng, dtype, 2, 3), _leaf(rng, dtype, 4, 1, 3)
    _check(lambda a, b: LA.vecdot(a, b), x, y)
    _check(lambda a, b: LA.vecdot(a, b, dim=0), x, _leaf(rng, dtype, 2, 3))


def test_vander_including_zero():
    x = F.tensor([0.0, -1.5, 2.0], dtype=F.float64, requires_grad=True)
    _check(lambda a: LA.vander(a, N=4), x)
    # d/dx of (1, x, x^2, x^3) summed is 1 + 2x + 3x^2: exactly 1 at x = 0
    LA.vander(x, N=4).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [1.0, 1 - 3.0 + 6.75, 1 + 4.0 + 12.0])


@pytest.mark.parametrize("dtype", DTYPES)
def test_diagonal(dtype):
    a = _leaf(np.random.default_rng(2), dtype, 2, 3, 4)
    _check(lambda x: LA.diagonal(x, offset=1), a)


@pytest.mark.parametrize("dtype", DTYPES)
def test_matrix_exp(dtype):
    a = _leaf(np.random.default_rng(3), dtype, 2, 3, 3)
    _check(LA.matrix_exp, a)


@pytest.mark.parametrize("dtype", DTYPES)
def test_householder_product(dtype):
    rng = np.random.default_rng(4)
    a, tau = _leaf(rng, dtype, 2, 4, 3), _leaf(rng, dtype, 2, 2)
    _check(LA.householder_product, a, tau)


@pytest.mark.parametrize(
    "shapes", [[(2, 3), (3, 4), (4, 2)], [(3,), (3, 2), (2, 4), (4,)], [(3,), (3,)]]
)
@pytest.mark.parametrize("dtype", DTYPES)
def test_multi_dot(shapes, dtype):
    rng = np.random.default_rng(5)
    leaves = [_leaf(rng, dtype, *s) for s in shapes]
    _check(lambda *ts: LA.multi_dot(list(ts)), *leaves)


@pytest.mark.parametrize("dtype", DTYPES)
def test_tensorinv(dtype):
    a = _leaf(np.random.default_rng(6), dtype, 6, 6, shift=3.0).detach().reshape(2, 3, 6)
    _check(lambda x: LA.tensorinv(x, ind=2), a.requires_grad_(True))


@pytest.mark.parametrize("dtype", DTYPES)
def test_tensorsolve(dtype):
    rng = np.random.default_rng(7)
    a = _leaf(rng, dtype, 6, 6, shift=3.0).detach().reshape(2, 3, 6).requires_grad_(True)
    _check(LA.tensorsolve, a, _leaf(rng, dtype, 2, 3))


def test_ldl_has_no_derivative():
    a = F.tensor([[4.0, 1.0], [1.0, 3.0]], dtype=F.float64, requires_grad=True)
    LD, pivots = LA.ldl_factor(a)
    assert LD.requires_grad  # in the graph, as PyTorch's: backward raises
    with pytest.raises(RuntimeError, match="derivative for aten::linalg_ldl_factor_ex is not"):
        LD.sum().backward()
    b = F.ones(2, 1, dtype=F.float64, requires_grad=True)
    x = LA.ldl_solve(LD.detach(), pivots, b)
    with pytest.raises(RuntimeError, match="derivative for aten::linalg_ldl_solve is not"):
        x.sum().backward()
