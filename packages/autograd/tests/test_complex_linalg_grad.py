"""Complex gradients of flambeau.linalg's decompositions (gradcheck and gradgradcheck).

Factors pinned by the decomposition (Cholesky's L, QR's Q and R, LU's L and U, slogdet's
sign) are checked directly. Complex eigenvectors and singular vectors are free up to a
phase per column, so only phase-invariant functions of them have a gradient: those are
checked through |V|^2, V diag(c) V^H and U Vh, the last coupling U's phases to V's.
"""

from __future__ import annotations

import numpy as np
import pytest

import flambeau as F
from flambeau.autograd import gradcheck, gradgradcheck

LA = F.linalg


def _c(rng, *shape):
    return F.from_numpy(rng.standard_normal(shape) + 1j * rng.standard_normal(shape))


def _leaf(rng, *shape):
    return _c(rng, *shape).requires_grad_(True)


def _hpd(a):
    """A Hermitian positive-definite matrix, differentiable in a."""
    n = a.shape[-1]
    return a @ a.mH + F.eye(n, dtype=a.dtype) * n


def _hermitian(a):
    return (a + a.mH) * 0.5


def _check(fn, *inputs, second=True):
    assert gradcheck(fn, inputs, atol=1e-5, rtol=1e-3)
    if second:
        assert gradgradcheck(fn, inputs, atol=1e-4, rtol=1e-3)


SHAPES = [(3, 3), (4, 3), (3, 4), (2, 3, 2)]


@pytest.mark.parametrize("upper", [False, True])
def test_cholesky(upper):
    a = _leaf(np.random.default_rng(0), 2, 3, 3)
    _check(lambda x: LA.cholesky(_hpd(x), upper=upper), a)
    _check(lambda x: LA.cholesky_ex(_hpd(x)).L, a)


def test_cholesky_gradient_is_pytorchs():
    # PyTorch 2.13's value: L^-H (tril(X) + tril(X, -1)^H) / 2 L^-1 with X = L^H gL, which
    # carries an anti-Hermitian part (from i Im diag X) that a Hermitian dA never sees.
    A = F.tensor([[4.0, 1.0 - 2.0j], [1.0 + 2.0j, 6.0]], dtype=F.complex128).requires_grad_(True)
    G = F.tensor([[1.0 + 0.5j, 0.0], [-0.25 + 1.0j, 2.0 - 1.0j]], dtype=F.complex128)
    (gA,) = F.autograd.grad(LA.cholesky(A), A, G)
    want = np.array(
        [
            [0.2840098336691011 + 0.14705758316544945j, -0.0625 + 0.03676966733820218j],
            [-0.29191573387056174 + 0.0779381995970787j, 0.4588314677411235 - 0.22941573387056174j],
        ]
    )
    np.testing.assert_allclose(gA.resolve_conj().numpy(), want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("shape", SHAPES)
def test_qr_factors(shape):
    a = _leaf(np.random.default_rng(1), *shape)
    _check(lambda x: tuple(LA.qr(x)), a)
    _check(lambda x: LA.qr(x).R, a)  # gQ absent


def test_qr_r_mode():
    a = _leaf(np.random.default_rng(2), 4, 3)
    _check(lambda x: LA.qr(x, mode="r").R, a)


def test_eigh():
    rng = np.random.default_rng(3)
    a, c = _leaf(rng, 2, 3, 3), F.from_numpy(rng.standard_normal(3))
    _check(lambda x: LA.eigh(_hermitian(x)).eigenvalues, a)
    _check(lambda x: LA.eigvalsh(_hermitian(x)), a)

    def vectors(x):
        w, V = LA.eigh(_hermitian(x))
        return V * V.conj(), (V * c.to(V.dtype)) @ V.mH, w

    _check(vectors, a)


def test_eigh_upper():
    a = _leaf(np.random.default_rng(4), 3, 3)

    def fn(x):
        w, V = LA.eigh(_hermitian(x), UPLO="U")
        return w, V.abs()

    _check(fn, a)


@pytest.mark.parametrize("shape", SHAPES)
def test_svd(shape):
    rng = np.random.default_rng(5)
    a = _leaf(rng, *shape)
    _check(lambda x: LA.svdvals(x), a)

    def vectors(x):
        U, S, Vh = LA.svd(x, full_matrices=False)
        return U * U.conj(), Vh * Vh.conj(), U @ Vh, S

    _check(vectors, a)
    _check(lambda x: LA.svd(x, full_matrices=False).U.abs(), a)  # gVh absent


def test_svd_full_matrices():
    a = _leaf(np.random.default_rng(6), 4, 2)

    def fn(x):
        U, S, Vh = LA.svd(x)  # the extra columns of U are not unique: keep the first k
        return U[..., :, :2] @ Vh, S

    _check(fn, a)


def test_phase_dependent_loss_raises():
    rng = np.random.default_rng(7)
    a = _leaf(rng, 3, 3)
    V = LA.eigh(_hermitian(a)).eigenvectors
    with pytest.raises(RuntimeError, match="e\\^\\{i phi\\}"):
        F.autograd.grad(V.real.sum(), a)
    U = LA.svd(a).U
    with pytest.raises(RuntimeError, match="e\\^\\{i phi\\}"):
        F.autograd.grad(U.imag.sum(), a)


@pytest.mark.parametrize("shape", [(3, 3), (4, 2), (2, 4)])
def test_pinv(shape):
    a = _leaf(np.random.default_rng(8), *shape)
    _check(LA.pinv, a)


def test_pinv_hermitian():
    a = _leaf(np.random.default_rng(9), 3, 3)
    _check(lambda x: LA.pinv(_hpd(x), hermitian=True), a)


def test_lu():
    rng = np.random.default_rng(10)
    a = _leaf(rng, 2, 3, 3)
    _check(lambda x: LA.lu(x)[1:], a)
    _check(lambda x: LA.lu_factor(x).LU, a)


@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("adjoint", [False, True])
def test_lu_solve(left, adjoint):
    rng = np.random.default_rng(11)
    a = _leaf(rng, 3, 3)
    b = _leaf(rng, *((3, 2) if left else (2, 3)))

    def fn(x, y):
        LU, piv = LA.lu_factor(x)
        return LA.lu_solve(LU, piv, y, left=left, adjoint=adjoint)

    _check(fn, a, b)

    def packed(lu, y):  # the packed factors as the differentiated input
        return LA.lu_solve(lu, piv, y, left=left, adjoint=adjoint)

    LU, piv = LA.lu_factor(a.detach())
    _check(packed, LU.requires_grad_(True), b)


def test_slogdet():
    a = _leaf(np.random.default_rng(12), 2, 3, 3)
    _check(lambda x: tuple(LA.slogdet(x)), a)
    _check(lambda x: LA.slogdet(x).sign, a)


def test_real_eigh_gradient_is_symmetric():
    # PyTorch projects V^T gV onto the skew-symmetric matrices, so the gradient is symmetric.
    S = F.tensor([[2.0, 1.0, 0.0], [1.0, 3.0, 1.0], [0.0, 1.0, 4.0]], dtype=F.float64)
    S.requires_grad_(True)
    (gS,) = F.autograd.grad((LA.eigh(S).eigenvectors ** 4).sum(), S)
    np.testing.assert_allclose(gS.numpy(), gS.numpy().T, atol=1e-12)


def test_grad_of_two_outputs_of_one_node():
    a = _leaf(np.random.default_rng(13), 4, 3)
    Q, R = LA.qr(a)
    gQ, gR = F.ones_like(Q), F.ones_like(R)
    (both,) = F.autograd.grad([Q, R], [a], [gQ, gR])
    Q, R = LA.qr(a)
    (summed,) = F.autograd.grad((Q * gQ).real.sum() + (R * gR).real.sum(), a)
    np.testing.assert_allclose(both.resolve_conj().numpy(), summed.resolve_conj().numpy())
