"""Gradients of flambeau.fft, stft and istft.

Every transform is (real-)linear, so its vector-Jacobian product is the transpose of
a dense matrix, built here in NumPy from explicit DFT matrices (independent of the
formulas and of the FFT engine). gradcheck and gradgradcheck cover the n-D forms,
complex inputs, and stft/istft with gradients reaching the window.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import flambeau as F
from flambeau.autograd import gradcheck, gradgradcheck

RNG = np.random.default_rng(0)
NORMS = (None, "ortho", "forward")


def dft(n, forward):
    k = np.arange(n)
    return np.exp((-1 if forward else 1) * 2j * np.pi * np.outer(k, k) / n)


def scale(norm, n, forward):
    if norm == "ortho":
        return 1 / np.sqrt(n)
    scaled = norm == "forward" if forward else norm in (None, "backward")
    return 1 / n if scaled else 1.0


def fit(v, n):
    return np.concatenate([v[:n], np.zeros(max(n - v.size, 0), v.dtype)])


def transform(name, v, n, norm):
    """One 1-D transform of flambeau.fft of the vector v, by dense matrices."""
    forward = name in ("fft", "rfft", "hfft")
    if name in ("irfft", "hfft"):  # the Hermitian spectrum whose half v gives
        h = fit(v.astype(complex), n // 2 + 1)
        h[0] = h[0].real
        if n % 2 == 0:
            h[-1] = h[-1].real
        full = np.concatenate([h, np.conj(h[1 : (n + 1) // 2][::-1])])
        return (dft(n, forward) @ full * scale(norm, n, forward)).real
    y = dft(n, forward) @ fit(v.astype(complex), n) * scale(norm, n, forward)
    return y[: n // 2 + 1] if name in ("rfft", "ihfft") else y


def as_real(v):
    return np.concatenate([v.real, v.imag]) if np.iscomplexobj(v) else v


def jacobian(name, m, complex_in, n, norm):
    """d(real view of output) / d(real view of input) for inputs of size m."""
    columns = []
    for part in (1, 1j) if complex_in else (1,):
        for j in range(m):
            e = np.zeros(m, complex if complex_in else float)
            e[j] = part
            columns.append(as_real(transform(name, e, n, norm)))
    return np.stack(columns, 1)


CASES = [
    # name, input size, complex input, n
    ("fft", 6, True, None),
    ("fft", 6, False, 4),
    ("ifft", 5, True, 8),
    ("rfft", 6, False, None),
    ("rfft", 7, False, 5),
    ("ihfft", 6, False, 9),
    ("irfft", 4, True, None),
    ("irfft", 4, True, 7),
    ("irfft", 5, True, 4),
    ("hfft", 4, True, 5),
    ("hfft", 3, True, None),
]


@pytest.mark.parametrize("name, m, complex_in, n", CASES)
@pytest.mark.parametrize("norm", NORMS)
def test_vjp_is_the_transposed_dense_jacobian(name, m, complex_in, n, norm):
    x = RNG.standard_normal(m) + (1j * RNG.standard_normal(m) if complex_in else 0)
    size = n if n is not None else (2 * (m - 1) if name in ("irfft", "hfft") else m)
    jac = jacobian(name, m, complex_in, size, norm)
    xt = F.from_numpy(x).requires_grad_()
    y = getattr(F.fft, name)(xt, n=n, norm=norm)
    g = RNG.standard_normal(tuple(y.shape)) + (
        1j * RNG.standard_normal(tuple(y.shape)) if y.is_complex() else 0
    )
    (grad,) = F.autograd.grad(y, xt, F.from_numpy(g))
    want = jac.T @ as_real(g)
    if complex_in:
        want = want[:m] + 1j * want[m:]
    assert grad.dtype == xt.dtype
    np.testing.assert_allclose(grad.numpy(), want, atol=1e-10)


def cplx(*shape):
    return F.from_numpy(RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape))


def real(*shape):
    return F.from_numpy(RNG.standard_normal(shape))


ND_CASES = [
    ("fft2", cplx(3, 4), {"s": (4, 3), "norm": "ortho"}),
    ("ifftn", real(2, 3, 4), {"s": (2, 5), "dim": (2, 0)}),
    ("rfft2", real(3, 5), {"s": (2, 6)}),
    ("rfftn", real(2, 3, 3), {"dim": (0, 2), "norm": "forward"}),
    ("irfft2", cplx(3, 3), {"s": (4, 5)}),
    ("irfftn", cplx(2, 2, 3), {"s": (3, -1)}),
    ("hfft2", cplx(2, 4), {"norm": "ortho"}),
    ("hfftn", cplx(3, 3), {"s": (2, 5), "norm": "forward"}),
    ("ihfft2", real(3, 4), {"s": (3, 5)}),
    ("ihfftn", real(2, 5), {"dim": 1}),
    ("fftn", real(3, 2), {"dim": ()}),
]


@pytest.mark.parametrize("name, x, kwargs", ND_CASES, ids=[c[0] for c in ND_CASES])
def test_nd_gradcheck(name, x, kwargs):
    fn = getattr(F.fft, name)
    x = x.detach().requires_grad_()
    assert gradcheck(lambda t: fn(t, **kwargs), (x,))
    assert gradgradcheck(lambda t: fn(t, **kwargs), (x,))


@pytest.mark.parametrize(
    "call, x",
    [
        (lambda t: F._fft_c2c(t, [0, -1], 1, False), cplx(3, 4)),
        (lambda t: F._fft_r2c(t, [1, 0], 2, True), real(3, 4)),
        (lambda t: F._fft_r2c(t, [0], 0, False), real(5, 2)),
        (lambda t: F._fft_c2r(t, [0, 1], 1, 6), cplx(2, 4)),
        (lambda t: F._fft_c2r(t, [1], 0, 5), cplx(2, 3)),
    ],
)
def test_primitive_gradcheck(call, x):
    x = x.detach().requires_grad_()
    assert gradcheck(call, (x,)) and gradgradcheck(call, (x,))


def test_shift_gradients():
    x = real(3, 4).requires_grad_()
    assert gradcheck(lambda t: F.fft.fftshift(t, dim=(0, 1)), (x,))
    assert gradcheck(lambda t: F.fft.ifftshift(t), (x,))
    assert F.fft.fftfreq(4, requires_grad=True).is_leaf


# ---- stft and istft ------------------------------------------------------------


def window(n):
    return F.from_numpy(RNG.uniform(0.5, 1.5, n)).requires_grad_()


@pytest.mark.parametrize(
    "kwargs",
    [
        {"return_complex": True},
        {"return_complex": False, "normalized": True, "center": False},
        {"return_complex": True, "pad_mode": "constant", "onesided": False},
        {"return_complex": True, "center": False, "align_to_window": True},
    ],
)
def test_stft_gradients_reach_input_and_window(kwargs):
    x = real(12).requires_grad_()
    w = window(6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # return_complex=False is deprecated
        assert gradcheck(lambda x, w: F.stft(x, 8, 3, 6, w, **kwargs), (x, w))
        assert gradgradcheck(lambda x, w: F.stft(x, 8, 3, 6, w, **kwargs), (x, w))


def test_stft_of_complex_input_gradcheck():
    z = cplx(2, 10).requires_grad_()
    assert gradcheck(lambda z, w: F.stft(z, 6, 2, window=w), (z, window(6)))


@pytest.mark.parametrize(
    "kwargs",
    [{"length": 12}, {"center": False}, {"normalized": True, "length": 9}, {"onesided": False}],
)
def test_istft_gradients_reach_input_and_window(kwargs):
    n_frames = 5
    freq = 8 if kwargs.get("onesided") is False else 5
    spec = cplx(freq, n_frames).requires_grad_()
    w = window(8)
    assert gradcheck(lambda s, w: F.istft(s, 8, 3, window=w, **kwargs), (spec, w))
    assert gradgradcheck(lambda s, w: F.istft(s, 8, 3, window=w, **kwargs), (spec, w))


def test_istft_return_complex_gradcheck():
    spec = cplx(8, 4).requires_grad_()
    w = window(8)
    assert gradcheck(lambda s, w: F.istft(s, 8, 2, window=w, return_complex=True), (spec, w))
