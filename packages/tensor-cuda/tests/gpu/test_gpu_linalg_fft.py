"""The linear algebra (cuSOLVER, cuBLAS trsm) and FFT (cuFFT) kernels on CUDA, through
flambeau.linalg and flambeau.fft, against flambeau's CPU (LAPACK, NumPy's pocketfft):
factors that are unique compared directly (Cholesky, LU, LD, triangular solves,
eigenvalues, singular values, every transform), the others by what defines them
(Q R = A with Q orthonormal, A V = V diag(w), U diag(S) Vh = A), for float32 and
float64, batched, with transposed and sliced inputs.
Pivots and infos live on the device (the frontends read them back for their checks),
as PyTorch returns them."""

from __future__ import annotations

import pytest
from samples import DEVICE, assert_close, sample

import flambeau

DTYPES = [flambeau.float32, flambeau.float64]


def _tol(dtype, scale=1.0):
    """(rtol, atol) for a factorization computed by another library."""
    if dtype == flambeau.float32:
        return 1e-4 * scale, 1e-4 * scale
    return 1e-10 * scale, 1e-10 * scale


def _matrices(dtype, shape, seed):
    return sample(flambeau.float64, shape, seed=seed, scale=1.0).to(dtype)


def _spd(dtype, batch, n, seed):
    a = sample(flambeau.float64, (*batch, n, n), seed=seed, scale=1.0)
    return (a @ a.mT + n * flambeau.eye(n, dtype=flambeau.float64)).to(dtype)


def _eye_like(x):
    return flambeau.eye(x.shape[-1], dtype=x.dtype).expand(x.shape)


# ---- triangular solves (cuBLAS trsm) ----


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("upper", [True, False])
@pytest.mark.parametrize("unitriangular", [True, False])
def test_solve_triangular(dtype, left, upper, unitriangular):
    a = _matrices(dtype, (3, 6, 6), seed=1) + 4 * flambeau.eye(6, dtype=dtype)
    a = a.triu() if upper else a.tril()
    b = _matrices(dtype, (3, 6, 5) if left else (3, 5, 6), seed=2)
    kw = {"upper": upper, "left": left, "unitriangular": unitriangular}
    want = flambeau.linalg.solve_triangular(a, b, **kw)
    got = flambeau.linalg.solve_triangular(a.to(DEVICE), b.to(DEVICE), **kw)
    assert_close(got, want, *_tol(dtype))
    # Broadcast batches and a transposed right-hand side.
    got = flambeau.linalg.solve_triangular(a[:1].to(DEVICE), b.mT.contiguous().mT.to(DEVICE), **kw)
    assert_close(got, flambeau.linalg.solve_triangular(a[:1], b, **kw), *_tol(dtype))


# ---- Cholesky, LU, LDL^T ----


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("shape", [((), 1), ((), 7), ((4,), 33), ((2, 3), 5)])
def test_cholesky(dtype, upper, shape):
    a = _spd(dtype, *shape, seed=3)
    want = flambeau.linalg.cholesky(a, upper=upper)
    assert_close(flambeau.linalg.cholesky(a.to(DEVICE), upper=upper), want, *_tol(dtype, 10))


def test_cholesky_reports_a_matrix_that_is_not_positive_definite():
    a = -flambeau.eye(3, dtype=flambeau.float64)
    _, info = flambeau.linalg.cholesky_ex(a.to(DEVICE))
    assert int(info.cpu()) == 1


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(5, 5), (3, 8, 8), (6, 4), (4, 6)])
def test_lu_factor_values(dtype, shape):
    a = _matrices(dtype, shape, seed=4)
    want, _ = flambeau.linalg.lu_factor(a)
    got, _ = flambeau.linalg.lu_factor(a.to(DEVICE))
    assert_close(got, want, *_tol(dtype, 10))


def test_lu_factor_pivots():
    a = _matrices(flambeau.float64, (3, 6, 6), seed=5)
    _, want = flambeau.linalg.lu_factor(a)
    _, got = flambeau.linalg.lu_factor(a.to(DEVICE))
    assert got.device.type == "cuda" and flambeau.equal(got.cpu(), want)


@pytest.mark.parametrize("dtype", DTYPES)
def test_solve_and_inv(dtype):
    a = _matrices(dtype, (3, 6, 6), seed=6) + 3 * flambeau.eye(6, dtype=dtype)
    b = _matrices(dtype, (3, 6, 2), seed=7)
    got = flambeau.linalg.solve(a.to(DEVICE), b.to(DEVICE))
    assert_close(got, flambeau.linalg.solve(a, b), *_tol(dtype, 10))
    assert_close(flambeau.linalg.inv(a.to(DEVICE)), flambeau.linalg.inv(a), *_tol(dtype, 10))


@pytest.mark.parametrize("dtype", DTYPES)
def test_det_lu_and_lu_solve(dtype):
    a = _matrices(dtype, (2, 4, 4), seed=8)
    b = _matrices(dtype, (2, 4, 3), seed=9)
    d = a.to(DEVICE)
    assert_close(flambeau.linalg.det(d), flambeau.linalg.det(a), *_tol(dtype, 10))
    sign, logabs = flambeau.linalg.slogdet(d)
    want_sign, want_logabs = flambeau.linalg.slogdet(a)
    assert sign.device.type == "cuda"
    assert_close(sign, want_sign, *_tol(dtype))
    assert_close(logabs, want_logabs, *_tol(dtype, 10))
    for got, want in zip(flambeau.linalg.lu(d), flambeau.linalg.lu(a)):
        assert_close(got, want, *_tol(dtype, 10))
    lu, piv = flambeau.linalg.lu_factor(d)
    for adjoint in (False, True):
        got = flambeau.linalg.lu_solve(lu, piv, b.to(DEVICE), adjoint=adjoint)
        want = flambeau.linalg.lu_solve(*flambeau.linalg.lu_factor(a), b, adjoint=adjoint)
        assert_close(got, want, *_tol(dtype, 10))


def test_singular_matrices_raise():
    singular = flambeau.zeros(2, 3, 3, dtype=flambeau.float64).to(DEVICE)
    with pytest.raises(flambeau.linalg.LinAlgError, match="Batch element 0"):
        flambeau.linalg.inv(singular)
    assert flambeau.linalg.lu_factor_ex(singular)[2].cpu().tolist() == [1, 1]


@pytest.mark.parametrize("dtype", DTYPES)
def test_ldl_factor_values(dtype):
    # Diagonally dominant: Bunch-Kaufman pivots nothing, so LD is unique.
    a = _spd(dtype, (3,), 6, seed=9)
    want, _ = flambeau.linalg.ldl_factor(a)
    got, _ = flambeau.linalg.ldl_factor(a.to(DEVICE))
    assert_close(got, want, *_tol(dtype, 100))


def test_ldl_solve_is_not_implemented_on_cuda():
    """cuSOLVER has sytrf but no sytrs: ldl_solve raises, naming the kernel and device."""
    a = _spd(flambeau.float64, (), 4, seed=10)
    ld, piv = flambeau.linalg.ldl_factor(a)
    with pytest.raises(NotImplementedError, match="cuda"):
        flambeau.linalg.ldl_solve(ld.to(DEVICE), piv.to(DEVICE), a.to(DEVICE))


# ---- QR, eigh, SVD ----


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
@pytest.mark.parametrize("shape", [(6, 4), (4, 6), (3, 5, 5)])
def test_qr(dtype, mode, shape):
    a = _matrices(dtype, shape, seed=11)
    q, r = flambeau.linalg.qr(a.to(DEVICE), mode=mode)
    want_q, want_r = flambeau.linalg.qr(a, mode=mode)
    assert tuple(q.shape) == tuple(want_q.shape) and tuple(r.shape) == tuple(want_r.shape)
    # Householder's signs may differ row by row: |R| is unique, and Q R = A.
    assert_close(r.abs(), want_r.abs(), *_tol(dtype, 10))
    assert_close(r.triu(), r.cpu(), 0.0, 0.0)
    if mode != "r":
        q, r = q.cpu(), r.cpu()
        k = min(shape[-2], shape[-1])
        assert_close(q[..., :k] @ r[..., :k, :], a, *_tol(dtype, 10))
        assert_close(q.mT @ q, _eye_like(q.mT @ q), *_tol(dtype, 10))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("uplo", ["L", "U"])
@pytest.mark.parametrize("shape", [((), 1), ((), 9), ((3,), 17)])
def test_eigh(dtype, uplo, shape):
    a = _spd(dtype, *shape, seed=12)
    a = a + a.mT  # symmetric, distinct eigenvalues
    want_w = flambeau.linalg.eigvalsh(a, UPLO=uplo)
    assert_close(flambeau.linalg.eigvalsh(a.to(DEVICE), UPLO=uplo), want_w, *_tol(dtype, 100))
    w, v = flambeau.linalg.eigh(a.to(DEVICE), UPLO=uplo)
    assert_close(w, want_w, *_tol(dtype, 100))
    w, v = w.cpu(), v.cpu()
    assert_close(a @ v, v * w.unsqueeze(-2), *_tol(dtype, 100))
    assert_close(v.mT @ v, _eye_like(v), *_tol(dtype, 10))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("full_matrices", [False, True])
@pytest.mark.parametrize("shape", [(1, 1), (7, 4), (4, 7), (3, 6, 6), (2, 33, 5)])
def test_svd(dtype, full_matrices, shape):
    a = _matrices(dtype, shape, seed=13)
    want_s = flambeau.linalg.svdvals(a)
    assert_close(flambeau.linalg.svdvals(a.to(DEVICE)), want_s, *_tol(dtype, 10))
    u, s, vh = flambeau.linalg.svd(a.to(DEVICE), full_matrices=full_matrices)
    want_u, _, want_vh = flambeau.linalg.svd(a, full_matrices=full_matrices)
    assert tuple(u.shape) == tuple(want_u.shape) and tuple(vh.shape) == tuple(want_vh.shape)
    assert_close(s, want_s, *_tol(dtype, 10))
    u, s, vh = u.cpu(), s.cpu(), vh.cpu()
    k = s.shape[-1]
    assert_close((u[..., :k] * s.unsqueeze(-2)) @ vh[..., :k, :], a, *_tol(dtype, 10))
    assert_close(u.mT @ u, _eye_like(u.mT @ u), *_tol(dtype, 10))
    assert_close(vh @ vh.mT, _eye_like(vh @ vh.mT), *_tol(dtype, 10))


def test_svd_of_transposed_and_sliced_inputs():
    a = _matrices(flambeau.float64, (3, 8, 10), seed=14)
    on_device = a.to(DEVICE)
    for view in (lambda t: t.mT, lambda t: t[:, ::2, 1::3]):
        got = flambeau.linalg.svdvals(view(on_device))
        assert_close(got, flambeau.linalg.svdvals(view(a)), *_tol(flambeau.float64, 10))


@pytest.mark.parametrize("name", ["lstsq", "eig"])
def test_gelsd_and_geev_are_not_implemented_on_cuda(name):
    """No cuSOLVER routine with LAPACK's gelsd/geev results: NotImplementedError."""
    a = _matrices(flambeau.float64, (4, 4), seed=15).to(DEVICE)
    with pytest.raises(NotImplementedError, match="cuda"):
        if name == "lstsq":
            flambeau.linalg.lstsq(a, a, driver="gelsd")
        else:
            flambeau.linalg.eig(a)


# ---- FFT (cuFFT) ----

COMPLEX = {flambeau.float32: flambeau.complex64, flambeau.float64: flambeau.complex128}


def _complex(dtype, shape, seed):
    re = sample(flambeau.float64, shape, seed=seed, scale=1.0)
    im = sample(flambeau.float64, shape, seed=seed + 100, scale=1.0)
    return flambeau.complex(re, im).to(COMPLEX[dtype])


def _fft_close(got, want, dtype, points):
    """Transforms within float rounding grown by the sum's length."""
    rtol, atol = (1e-5, 1e-5 * points**0.5) if dtype == flambeau.float32 else (1e-12, 1e-12)
    assert got.device.type == DEVICE
    got = got.cpu()
    assert got.dtype == want.dtype and tuple(got.shape) == tuple(want.shape)
    if want.dtype.is_complex:
        assert_close(got.real.contiguous(), want.real.contiguous(), rtol, atol)
        assert_close(got.imag.contiguous(), want.imag.contiguous(), rtol, atol)
    else:
        assert_close(got, want, rtol, atol)


NORMS = [None, "ortho", "forward"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("n", [1, 2, 7, 16, 97, 1000])
def test_fft_ifft_1d(dtype, norm, n):
    x = _complex(dtype, (3, n), seed=n)
    for fn in (flambeau.fft.fft, flambeau.fft.ifft):
        _fft_close(fn(x.to(DEVICE), norm=norm), fn(x, norm=norm), dtype, n)
        _fft_close(fn(x.to(DEVICE), dim=0, norm=norm), fn(x, dim=0, norm=norm), dtype, 3)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("n", [1, 2, 7, 16, 97, 1000])
def test_rfft_irfft_1d(dtype, norm, n):
    x = sample(dtype, (3, n), seed=n, scale=1.0)
    got = flambeau.fft.rfft(x.to(DEVICE), norm=norm)
    _fft_close(got, flambeau.fft.rfft(x, norm=norm), dtype, n)
    spectrum = flambeau.fft.rfft(x)
    # The default size, 2 * (n // 2), is n's own for even n only (an odd n's last bin
    # would be read as a Nyquist bin with an imaginary part, which libraries treat
    # differently).
    for size in (None, n) if n % 2 == 0 else (n,):
        got = flambeau.fft.irfft(spectrum.to(DEVICE), n=size, norm=norm)
        _fft_close(got, flambeau.fft.irfft(spectrum, n=size, norm=norm), dtype, n)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize(
    "dim", [(0, 1), (1, 0), (0, 2), (2, 0, 1), (0, 1, 2, 3), (3, 1, 0, 2), None]
)
def test_nd_transforms(dtype, norm, dim):
    """Up to three dims run as one plan, a fourth one dim at a time; dims out of order
    or not last go through a packed copy."""
    x = _complex(dtype, (3, 4, 5, 6), seed=21)
    r = sample(dtype, (3, 4, 5, 6), seed=22, scale=1.0)
    points = 360
    for fn in (flambeau.fft.fftn, flambeau.fft.ifftn):
        _fft_close(fn(x.to(DEVICE), dim=dim, norm=norm), fn(x, dim=dim, norm=norm), dtype, points)
    want = flambeau.fft.rfftn(r, dim=dim, norm=norm)
    _fft_close(flambeau.fft.rfftn(r.to(DEVICE), dim=dim, norm=norm), want, dtype, points)
    last = (dim or (0, 1, 2, 3))[-1]
    size = r.shape[last]
    s = [r.shape[d] for d in (dim or (0, 1, 2, 3))]
    got = flambeau.fft.irfftn(want.to(DEVICE), s=s, dim=dim, norm=norm)
    _fft_close(got, flambeau.fft.irfftn(want, s=s, dim=dim, norm=norm), dtype, points)
    assert got.shape[last] == size


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("normalization", [0, 1, 2])
@pytest.mark.parametrize("dims", [[1], [0, 1], [1, 0]])
def test_two_sided_r2c(dtype, normalization, dims):
    """The primitive's onesided=False (the full spectrum of a real input)."""
    x = sample(dtype, (4, 9), seed=23, scale=1.0)
    want = flambeau._fft_r2c(x, dims, normalization, False)
    got = flambeau._fft_r2c(x.to(DEVICE), dims, normalization, False)
    _fft_close(got, want, dtype, 36)


@pytest.mark.parametrize("dtype", DTYPES)
def test_strided_inputs_and_cropping(dtype):
    x = _complex(dtype, (6, 10), seed=24)
    r = sample(dtype, (6, 10), seed=25, scale=1.0)
    # Views taken on the device: the kernels get the strides.
    xd, rd = x.to(DEVICE), r.to(DEVICE)
    for view in (lambda t: t.mT, lambda t: t[:, ::3], lambda t: t[::2, 1:]):
        _fft_close(flambeau.fft.fft(view(xd)), flambeau.fft.fft(view(x)), dtype, 10)
        _fft_close(flambeau.fft.fft2(view(xd)), flambeau.fft.fft2(view(x)), dtype, 60)
        _fft_close(flambeau.fft.rfft(view(rd)), flambeau.fft.rfft(view(r)), dtype, 10)
    # c2r of strided rows of a Hermitian spectrum (cuFFT and NumPy agree on those).
    spectrum = flambeau.fft.rfft(r)
    for view in (lambda t: t[::2], lambda t: t[1:, :]):
        got = flambeau.fft.irfft(view(spectrum.to(DEVICE)), n=10)
        _fft_close(got, flambeau.fft.irfft(view(spectrum), n=10), dtype, 10)
    # n shorter (a cropped, strided view) and longer (zero-padded) than the signal.
    for n in (4, 16):
        _fft_close(flambeau.fft.rfft(rd, n=n), flambeau.fft.rfft(r, n=n), dtype, n)
