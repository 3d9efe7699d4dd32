"""Gradients of the special functions and the numeric operators beyond what the optable
rows check (tests/test_gradcheck_optable.py): the points where a formula takes a
separate branch, the tails, hand-derived values, and the operators PyTorch does not
differentiate."""

from __future__ import annotations

import math

import numpy as np
import pytest

import flambeau as F
from flambeau.autograd import gradcheck, gradgradcheck

S = F.special


def leaf(values):
    return F.tensor(values, dtype=F.float64, requires_grad=True)


def grad_of(fn, x):
    (g,) = F.autograd.grad(fn(x).sum(), [x])
    return g.numpy()


def scipy_special():
    return pytest.importorskip("scipy.special")


@pytest.mark.parametrize(
    "fn,expected",
    [(S.i1, 0.5), (S.i1e, 0.5), (F.sinc, 0.0), (S.i0e, 0.0), (F.i0, 0.0), (S.entr, math.inf)],
    ids=["i1", "i1e", "sinc", "i0e", "i0", "entr"],
)
def test_gradient_at_zero(fn, expected):
    assert grad_of(fn, leaf([0.0])).tolist() == [expected]


def test_bessel_gradients_against_scipy():
    s = scipy_special()
    x = np.array([-3.5, -0.2, 0.7, 4.0, 35.0])
    np.testing.assert_allclose(grad_of(F.i0, leaf(x)), s.i1(x))
    np.testing.assert_allclose(grad_of(S.i1, leaf(x)), s.ivp(1, x))
    # d/dx e^-|x| I0(x) = i1e(x) - sgn(x) i0e(x).
    np.testing.assert_allclose(grad_of(S.i0e, leaf(x)), s.i1e(x) - np.sign(x) * s.i0e(x))
    np.testing.assert_allclose(
        grad_of(S.i1e, leaf(x)), s.ivp(1, x) * np.exp(-np.abs(x)) - np.sign(x) * s.i1e(x)
    )


@pytest.mark.parametrize(
    "fn,values",
    [
        (S.i0e, [-40.0, -1e-3, 2.0, 60.0]),
        (S.i1e, [-40.0, -1e-3, 2.0, 60.0]),
        (S.erfcx, [-4.0, 0.3, 30.0, 200.0]),
        (S.log_ndtr, [-35.0, -3.0, 0.5, 6.0]),
        (S.ndtr, [-6.0, -0.1, 2.0]),
        (S.ndtri, [1e-12, 0.03, 0.5, 0.999]),
        (S.entr, [1e-3, 0.5, 7.0]),
        (F.sinc, [-2.5, 1e-4, 0.5, 3.0]),
        (lambda t: F.mvlgamma(t, 4), [2.0, 3.5, 10.0]),
        (lambda t: F.frexp(t).mantissa, [-5.3, 0.3, 1e-5, 700.1]),
        (F.deg2rad, [-90.0, 30.0]),
        (F.rad2deg, [-1.0, 2.0]),
    ],
    ids=[
        "i0e",
        "i1e",
        "erfcx",
        "log_ndtr",
        "ndtr",
        "ndtri",
        "entr",
        "sinc",
        "mvlgamma",
        "frexp",
        "deg2rad",
        "rad2deg",
    ],  # fmt: skip
)
def test_unary_gradcheck_in_the_tails(fn, values):
    assert gradcheck(fn, (leaf(values),))
    assert gradgradcheck(fn, (leaf(values),))


def test_second_argument_gradients_against_hand_derived_values():
    s = scipy_special()
    q = leaf([0.3, 1.5, 4.0])
    # d/dq zeta(x, q) = -x zeta(x + 1, q).
    np.testing.assert_allclose(
        grad_of(lambda t: S.zeta(2.5, t), q), -2.5 * s.zeta(3.5, [0.3, 1.5, 4.0])
    )
    # d/dx P(a, x) = -d/dx Q(a, x) = x^(a-1) e^-x / Gamma(a).
    a = np.array([0.5, 2.0, 7.5])
    x = np.array([0.3, 1.5, 4.0])
    pdf = x ** (a - 1) * np.exp(-x) / s.gamma(a)
    np.testing.assert_allclose(grad_of(lambda t: F.igamma(F.tensor(a), t), leaf(x)), pdf)
    np.testing.assert_allclose(grad_of(lambda t: S.gammaincc(F.tensor(a), t), leaf(x)), -pdf)
    for fn in (lambda t: S.zeta(F.tensor([2.5, 3.0, 6.0]), t), lambda t: F.igamma(a[0], t)):
        assert gradcheck(fn, (leaf([0.3, 1.5, 4.0]),))
        assert gradgradcheck(fn, (leaf([0.3, 1.5, 4.0]),))


@pytest.mark.parametrize(
    "call,message",
    [
        (lambda t: S.zeta(t, 2.0), "the derivative for 'zeta' is not implemented"),
        (lambda t: F.igamma(t, 2.0), "the derivative for 'igamma: input' is not implemented"),
        (lambda t: S.gammaincc(t, 2.0), "the derivative for 'igammac: input' is not implemented"),
    ],
    ids=["zeta", "igamma", "igammac"],
)
def test_first_argument_derivative_raises_as_in_pytorch(call, message):
    with pytest.raises(NotImplementedError, match=message):
        call(leaf([2.5])).sum().backward()


def test_heaviside_has_no_derivative():
    x = leaf([-1.0, 0.0, 2.0])
    with pytest.raises(RuntimeError, match="derivative for 'heaviside' is not implemented"):
        F.heaviside(x, F.tensor([0.5], dtype=F.float64)).sum().backward()


@pytest.mark.parametrize(
    "call",
    [
        S.airy_ai, S.bessel_j0, S.bessel_j1, S.bessel_y0, S.bessel_y1, S.modified_bessel_i0,
        S.modified_bessel_i1, S.modified_bessel_k0, S.modified_bessel_k1,
        S.scaled_modified_bessel_k0, S.scaled_modified_bessel_k1, S.spherical_bessel_j0,
        lambda t: S.chebyshev_polynomial_t(t, 3), lambda t: S.chebyshev_polynomial_u(t, 3),
        lambda t: S.chebyshev_polynomial_v(t, 3), lambda t: S.chebyshev_polynomial_w(t, 3),
        lambda t: S.shifted_chebyshev_polynomial_t(t, 3),
        lambda t: S.shifted_chebyshev_polynomial_u(t, 3),
        lambda t: S.shifted_chebyshev_polynomial_v(t, 3),
        lambda t: S.shifted_chebyshev_polynomial_w(t, 3),
        lambda t: S.hermite_polynomial_h(t, 3), lambda t: S.hermite_polynomial_he(t, 3),
        lambda t: S.laguerre_polynomial_l(t, 3), lambda t: S.legendre_polynomial_p(t, 3),
        F.signbit,
    ],
)  # fmt: skip
def test_nondifferentiable_results_do_not_require_grad(call):
    assert not call(leaf([0.5, 1.5])).requires_grad


def test_xlogy_gradients_at_zero_follow_pytorch():
    x, y = leaf([0.0, 0.0, 2.0]), leaf([0.0, -1.0, 3.0])
    F.xlogy(x, y).sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, math.log(3.0)]
    gy = y.grad.tolist()
    assert math.isnan(gy[0]) and gy[1:] == [0.0, 2.0 / 3.0]
    x2, y2 = leaf([0.0, 0.0, 2.0]), leaf([-1.0, -2.0, 2.0])
    S.xlog1py(x2, y2).sum().backward()
    assert x2.grad.tolist() == [0.0, 0.0, pytest.approx(math.log(3.0))]
    assert y2.grad.tolist()[1:] == [0.0, 2.0 / 3.0]
    # A Python number for y (the mask is still applied).
    x3 = leaf([0.0, 1.5])
    F.xlogy(x3, 0.0).sum().backward()
    assert x3.grad.tolist() == [0.0, -math.inf]


def test_ldexp_and_float_power_gradients():
    x, e = leaf([1.5, -0.25]), leaf([3.0, -2.0])
    F.ldexp(x, e).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [8.0, 0.25])
    np.testing.assert_allclose(e.grad.numpy(), [1.5 * 8 * math.log(2), -0.25 * 0.25 * math.log(2)])
    big = leaf([1e-300])
    F.ldexp(big, F.tensor([1030])).sum().backward()
    assert big.grad.item() == 2.0**1000 * 2.0**30
    # float32 operands: float64 result, float32 gradients.
    b = F.tensor([1.5, 2.0], requires_grad=True)
    p = F.tensor([2.0, 0.5], requires_grad=True)
    r = F.float_power(b, p)
    assert r.dtype == F.float64
    r.sum().backward()
    assert b.grad.dtype == F.float32 and p.grad.dtype == F.float32
    np.testing.assert_allclose(b.grad.numpy(), [3.0, 0.5 / math.sqrt(2.0)], rtol=1e-6)
    np.testing.assert_allclose(
        p.grad.numpy(), [2.25 * math.log(1.5), math.sqrt(2.0) * math.log(2.0)], rtol=1e-6
    )
    assert gradcheck(lambda t: F.float_power(2.5, t), (leaf([0.5, -1.0]),))
    assert gradgradcheck(lambda t: F.float_power(t, 3), (leaf([0.5, -1.0]),))


def test_nextafter_is_the_identity_in_its_first_argument():
    x, y = leaf([1.0, -2.0]), leaf([2.0, -3.0])
    F.nextafter(x, y).sum().backward()
    assert x.grad.tolist() == [1.0, 1.0] and y.grad.tolist() == [0.0, 0.0]


def test_inplace_special_functions_record_their_gradient():
    s = scipy_special()
    x = leaf([0.5, 2.0])
    y = x.clone()
    y.i0_()
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), s.i1([0.5, 2.0]))
    q = leaf([2.5, 3.0])
    z = q * 1.0
    z.mvlgamma_(2)
    z.sum().backward()
    np.testing.assert_allclose(q.grad.numpy(), s.psi([2.5, 3.0]) + s.psi([2.0, 2.5]))
