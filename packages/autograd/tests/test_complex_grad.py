"""Gradients of complex tensors (PyTorch's convention: z.grad = dL/dRe z + i dL/dIm z).

Hand-derived gradients, in-place writes through real/imag views, and gradcheck /
gradgradcheck of complex functions that the optable rows do not cover.
"""

from __future__ import annotations

import numpy as np
import pytest

import flambeau as F
from flambeau.autograd import gradcheck, gradgradcheck


def cplx(shape, seed=0, scale=1.0):
    rng = np.random.default_rng(seed)
    z = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    return F.from_numpy((scale * z).astype(np.complex128))


def leaf(shape, seed=0):
    return cplx(shape, seed).requires_grad_(True)


def test_squared_magnitude_gradient_is_2z():
    z = leaf((3, 2))
    (z * z.conj()).real.sum().backward()
    np.testing.assert_allclose(z.grad.numpy(), 2 * z.detach().numpy())


def test_abs_gradient_is_unit_phase():
    z = leaf(5)
    z.abs().sum().backward()
    zn = z.detach().numpy()
    np.testing.assert_allclose(z.grad.numpy(), zn / np.abs(zn))


def test_real_part_of_product_gives_conjugate():
    z, w = leaf(4, 0), leaf(4, 1)
    (w * z).real.sum().backward()
    np.testing.assert_allclose(z.grad.numpy(), np.conj(w.detach().numpy()))
    np.testing.assert_allclose(w.grad.numpy(), np.conj(z.detach().numpy()))


def test_holomorphic_gradient_is_conjugate_derivative():
    z = leaf(4)
    F.exp(z).real.sum().backward()
    np.testing.assert_allclose(z.grad.numpy(), np.conj(np.exp(z.detach().numpy())))


def test_imag_and_view_as_real():
    z = leaf(3)
    c = F.from_numpy(np.arange(6.0).reshape(3, 2))
    (F.view_as_real(z) * c).sum().backward()
    np.testing.assert_allclose(z.grad.numpy(), c.numpy()[:, 0] + 1j * c.numpy()[:, 1])
    z.grad = None
    z.imag.sum().backward()
    np.testing.assert_allclose(z.grad.numpy(), np.full(3, 1j))


def test_real_input_of_complex_computation_gets_real_gradient():
    x = F.tensor([1.5, -2.0], dtype=F.float64, requires_grad=True)
    w = cplx(2, 3)
    (x * w).abs().sum().backward()
    assert x.grad.dtype == F.float64
    np.testing.assert_allclose(x.grad.numpy(), np.abs(w.numpy()) * np.sign([1.5, -2.0]))


def test_complex_of_real_parts_roundtrip():
    a = F.tensor([1.0, 2.0], dtype=F.float64, requires_grad=True)
    b = F.tensor([0.5, -1.0], dtype=F.float64, requires_grad=True)
    z = F.complex(a, b)
    (z * z.conj()).real.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), [2.0, 4.0])
    np.testing.assert_allclose(b.grad.numpy(), [1.0, -2.0])


def test_inplace_through_real_view():
    base = leaf(3)
    z = base.clone()
    z.real.mul_(2)
    (z * z.conj()).real.sum().backward()
    zn = base.detach().numpy()
    np.testing.assert_allclose(base.grad.numpy(), 8 * zn.real + 2j * zn.imag)


def test_real_tensors_unchanged():
    x = F.tensor([1.0, -2.0], dtype=F.float64, requires_grad=True)
    assert x.conj() is x and x.real is x and x.resolve_conj() is x
    (x * x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, -4.0])
    assert x.grad.dtype == F.float64


def test_angle_gradient():
    z = leaf(4)
    F.angle(z).sum().backward()
    zn = z.detach().numpy()
    np.testing.assert_allclose(z.grad.numpy(), 1j * zn / np.abs(zn) ** 2)


# Functions of complex128 inputs checked by finite differences (real and imaginary parts).
CASES = {
    "mul_conj": (lambda z, w: z * w.conj(), [(3,), (3,)]),
    "div": (lambda z, w: z / w, [(3,), (3,)]),
    "pow_scalar": (lambda z: z**3, [(4,)]),
    "reciprocal_sqrt": (lambda z: F.sqrt(z).reciprocal(), [(4,)]),
    "trig": (lambda z: F.sin(z) * F.cos(z) + F.tanh(z), [(4,)]),
    "log_exp": (lambda z: F.log(z) + F.exp(z) * F.sigmoid(z), [(4,)]),
    "abs_sgn": (lambda z: z.abs() * F.sgn(z), [(4,)]),
    "angle": (lambda z: F.angle(z), [(4,)]),
    "real_imag": (lambda z: z.real * z.imag, [(2, 3)]),
    "view_roundtrip": (lambda z: F.view_as_complex(F.view_as_real(z) * 2.0), [(2, 2)]),
    "polar": (lambda z: F.polar(z.abs(), F.angle(z) * 2), [(3,)]),
    "complex_parts": (lambda z: F.complex(z.real * 2, z.imag.exp()), [(3,)]),
    "sum_mean_prod": (lambda z: z.sum(0) + z.mean(1).prod(), [(2, 3)]),
    "matmul": (lambda a, b: a @ b, [(2, 3), (3, 2)]),
    "mv_dot": (lambda a, v: F.dot(F.mv(a, v), v), [(3, 3), (3,)]),
    "vdot": (lambda a, b: F.vdot(a, b), [(3,), (3,)]),
    "adjoint": (lambda a: a.mH @ a, [(3, 2)]),
    "addmm": (lambda c, a, b: F.addmm(c, a, b, alpha=2 - 1j, beta=0.5j), [(2, 2), (2, 3), (3, 2)]),
    "einsum": (lambda a, b: F.einsum("ij,jk->ik", a, b), [(2, 3), (3, 2)]),
    "inv": (lambda a: F.linalg.inv(a), [(3, 3)]),
    "det": (lambda a: F.linalg.det(a), [(3, 3)]),
    "solve": (lambda a, b: F.linalg.solve(a, b), [(3, 3), (3, 2)]),
    "vector_norm": (lambda z: F.linalg.vector_norm(z), [(4,)]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_complex_gradcheck(name):
    fn, shapes = CASES[name]
    inputs = tuple(leaf(s, seed=i) for i, s in enumerate(shapes))
    assert gradcheck(fn, inputs, atol=1e-5, rtol=1e-3)
    assert gradgradcheck(fn, inputs, atol=1e-4, rtol=1e-3)


def test_real_to_complex_gradcheck():
    # A real input feeding a complex output: its gradient is real.
    w = cplx(3, 5)
    x = F.tensor([0.3, -1.2, 2.0], dtype=F.float64, requires_grad=True)
    assert gradcheck(lambda t: F.exp(t * w), (x,))
    assert gradgradcheck(lambda t: F.exp(t * w), (x,))


@pytest.mark.parametrize("dtype", [F.float64, F.complex128])
def test_gradcheck_perturbs_non_contiguous_inputs(dtype):
    # A transposed input: its finite differences must write through to its own storage.
    x = F.randn(3, 4, dtype=dtype).t().requires_grad_(True)
    assert not x.is_contiguous()
    assert gradcheck(lambda t: (t * t).sum(0), (x,))
    assert not gradcheck(
        lambda t: (t * t).detach().sum(0) + t.sum(0) * 0, (x,), raise_exception=False
    )
