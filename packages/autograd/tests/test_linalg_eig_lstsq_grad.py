"""Gradients of linalg.eig, linalg.eigvals and linalg.lstsq (gradcheck and gradgradcheck).

Eigenvectors of a general matrix are free up to a phase per column (a sign for real ones),
so only phase-invariant functions of them have a gradient: they are checked through
V diag(c) V^-1 and |V|^2. The samples have distinct eigenvalues (random matrices).
lstsq differentiates its solution and residuals (PyTorch 2.13), for full-rank A.
The optable rows of linalg_lstsq and linalg_eigvals are checked here, not in
test_gradcheck_optable.py (see CHECKED_ELSEWHERE there).
"""

from __future__ import annotations

import numpy as np
import pytest

import flambeau as F
from flambeau.autograd import gradcheck, gradgradcheck

LA = F.linalg
DTYPES = ["float64", "complex128"]


def _leaf(rng, dtype, *shape):
    x = rng.standard_normal(shape)
    if dtype == "complex128":
        x = x + 1j * rng.standard_normal(shape)
    return F.from_numpy(x).requires_grad_(True)


def _check(fn, *inputs):
    assert gradcheck(fn, inputs, atol=1e-5, rtol=1e-3)
    assert gradgradcheck(fn, inputs, atol=1e-4, rtol=1e-3)


@pytest.mark.parametrize("dtype", DTYPES)
def test_eigvals(dtype):
    a = _leaf(np.random.default_rng(0), dtype, 2, 3, 3)
    _check(LA.eigvals, a)


@pytest.mark.parametrize("dtype", DTYPES)
def test_eig(dtype):
    rng = np.random.default_rng(1)
    a = _leaf(rng, dtype, 3, 3)
    c = F.from_numpy(rng.standard_normal(3) + 1j * rng.standard_normal(3))

    def both(x):
        w, V = LA.eig(x)
        return w, (V * c) @ LA.inv(V), V * V.conj()

    _check(both, a)
    _check(lambda x: LA.eig(x).eigenvalues, a)  # no gradient for V
    _check(lambda x: LA.eig(x).eigenvectors.abs(), a)  # none for w


def test_eig_batched():
    a = _leaf(np.random.default_rng(2), "complex128", 2, 2, 2)
    _check(lambda x: LA.eig(x).eigenvectors.abs(), a)


def test_eig_phase_dependent_loss_raises():
    a = _leaf(np.random.default_rng(3), "complex128", 3, 3)
    V = LA.eig(a).eigenvectors
    with pytest.raises(RuntimeError, match="e\\^\\{i phi\\}"):
        F.autograd.grad(V.real.sum(), a)


def test_eigvals_gradient_by_hand():
    # A = [[1, 2], [0, 3]]: d lambda = u^T dA v / u^T v with left/right eigenvectors
    # u = (1, -1), v = (1, 0) for lambda = 1 and u = (0, 1), v = (1, 1) for lambda = 3.
    A = F.tensor([[1.0, 2.0], [0.0, 3.0]], dtype=F.float64).requires_grad_(True)
    w = LA.eigvals(A)
    weight = F.where(w.detach().real < 2, 1.0, 10.0)
    (gA,) = F.autograd.grad((w.real * weight).sum(), A)
    np.testing.assert_allclose(gA.numpy(), [[1.0, 0.0], [9.0, 10.0]], atol=1e-12)


def test_eig_gradient_matches_numpy():
    # loss = Re sum(c * w): gA = V^-H diag(conj c) V^H (its real part for a real A).
    rng = np.random.default_rng(4)
    a = rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))
    A = F.from_numpy(a).requires_grad_(True)
    w, _ = LA.eig(A)
    wn, Vn = np.linalg.eig(a)
    c = np.exp(1j * np.arange(3.0))
    c_for_w = c[[int(np.argmin(abs(wn - z))) for z in w.detach().numpy()]]
    (gA,) = F.autograd.grad((w * F.from_numpy(c_for_w)).real.sum(), A)
    want = np.linalg.inv(Vn.conj().T) @ np.diag(c.conj()) @ Vn.conj().T
    np.testing.assert_allclose(gA.resolve_conj().numpy(), want, atol=1e-10)


LSTSQ_SHAPES = {
    "tall": ((4, 2), (4, 3)),
    "square": ((3, 3), (3, 2)),
    "wide": ((2, 4), (2, 3)),
    "batched": ((2, 3, 2), (2, 3, 2)),
    "vector": ((3, 2), (3,)),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", list(LSTSQ_SHAPES))
def test_lstsq_solution(case, dtype):
    rng = np.random.default_rng(5)
    sa, sb = LSTSQ_SHAPES[case]
    _check(lambda x, y: LA.lstsq(x, y).solution, _leaf(rng, dtype, *sa), _leaf(rng, dtype, *sb))


@pytest.mark.parametrize("dtype", DTYPES)
def test_lstsq_residuals(dtype):
    rng = np.random.default_rng(6)
    a, b = _leaf(rng, dtype, 2, 4, 2), _leaf(rng, dtype, 2, 4, 2)
    _check(lambda x, y: tuple(LA.lstsq(x, y, driver="gelsd")[:2]), a, b)


def test_lstsq_gradient_matches_numpy():
    rng = np.random.default_rng(7)
    a, b, g = rng.standard_normal((4, 2)), rng.standard_normal((4, 3)), rng.standard_normal((2, 3))
    A, B = F.from_numpy(a).requires_grad_(True), F.from_numpy(b).requires_grad_(True)
    gA, gB = F.autograd.grad((LA.lstsq(A, B).solution * F.from_numpy(g)).sum(), (A, B))
    np.testing.assert_allclose(gB.numpy(), np.linalg.pinv(a).T @ g, atol=1e-12)
    # gA by central differences of NumPy's lstsq
    want = np.zeros_like(a)
    for i in np.ndindex(a.shape):
        d = np.zeros_like(a)
        d[i] = 1e-6
        up, down = (np.linalg.lstsq(a + s * d, b, rcond=None)[0] for s in (1, -1))
        want[i] = ((up - down) * g).sum() / 2e-6
    np.testing.assert_allclose(gA.numpy(), want, atol=1e-7)


def test_lstsq_marks_only_solution_and_residuals_differentiable():
    rng = np.random.default_rng(3)
    A = F.from_numpy(rng.standard_normal((4, 3))).requires_grad_(True)
    out = F.linalg.lstsq(A, F.from_numpy(rng.standard_normal((4, 2))), driver="gelsd")
    assert [o.requires_grad for o in out] == [True, True, False, False]
